import { Worker, type ResourceLimits } from 'node:worker_threads';

/** Starts a worker thread on a TypeScript entry script (loaded through tsx, as the rest of the platform). */
export function startTypeScriptWorker(
  entry: string,
  workerData: unknown,
  resourceLimits?: ResourceLimits,
): Worker {
  const bootstrap = `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(entry)});`;
  return new Worker(bootstrap, { eval: true, workerData, ...(resourceLimits && { resourceLimits }) });
}
