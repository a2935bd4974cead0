import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Starts a worker thread on an entry script of the platform: a TypeScript source is loaded through tsx (as the
 * rest of the platform when it runs from sources), a compiled `.js` entry (the production build) as it is, so
 * the build needs no TypeScript loader at run time.
 */
export function startTypeScriptWorker(
  entry: string,
  workerData: unknown,
  resourceLimits?: ResourceLimits,
): Worker {
  const options = { workerData, ...(resourceLimits && { resourceLimits }) };
  if (entry.endsWith('.js')) return new Worker(entry, options);
  const bootstrap = `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(entry)});`;
  return new Worker(bootstrap, { eval: true, ...options });
}
