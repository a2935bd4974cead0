import { Router } from 'express';
import type { MetricSources } from '../../bin/kernel';
import { ServiceStack, type ServiceModule } from '../../bin/service-module';

/** A service that writes each step of its life into `log`. */
function service(name: string, log: string[], parts: Partial<ServiceModule> = {}): ServiceModule {
  return {
    ...parts,
    async start() {
      log.push(`start ${name}`);
    },
    async stop() {
      log.push(`stop ${name}`);
    },
  };
}

function kernel(log: string[], measured: MetricSources[] = []) {
  return {
    measure: (sources: MetricSources) => measured.push(sources),
    async stop() {
      log.push('stop kernel');
    },
  };
}

test('services start in the order given and stop in reverse, the kernel last; a second stop does nothing', async () => {
  const log: string[] = [];
  const stack = new ServiceStack(kernel(log));
  for (const name of ['projections', 'integrator', 'command']) await stack.start(service(name, log));

  await stack.stop();
  await stack.stop();

  expect(log).toEqual([
    'start projections',
    'start integrator',
    'start command',
    'stop command',
    'stop integrator',
    'stop projections',
    'stop kernel',
  ]);
});

test('every service drains before any of them stops', async () => {
  const log: string[] = [];
  const stack = new ServiceStack(kernel(log));
  await stack.start(service('hooks', log, { drain: async () => void log.push('drain hooks') }));
  await stack.start(service('query', log));

  await stack.drain();
  await stack.stop();

  expect(log.slice(2)).toEqual(['drain hooks', 'stop query', 'stop hooks', 'stop kernel']);
});

test('the routers and the metric sources of the started services reach the app and the kernel', async () => {
  const measured: MetricSources[] = [];
  const stack = new ServiceStack(kernel([], measured));
  const aiCalls: MetricSources = { aiCallsInFlight: () => 2 };
  const command = Router();
  const query = Router();
  await stack.start(service('command', [], { http: { command }, metrics: aiCalls }));
  await stack.start(service('query', [], { http: { query } }));

  expect(stack.httpMounts()).toEqual({ command, query });
  expect(measured).toEqual([aiCalls]);
});
