import type { HttpKitOptions } from '../infra/http/app';
import type { MetricSources } from './kernel';

/** What a service mounts on the process's HTTP app: its routers (the operation contracts steer to them). */
export type HttpMounts = Pick<HttpKitOptions, 'command' | 'query' | 'hooks' | 'pages' | 'wellKnown'>;

/** One service of the platform, as a composition root starts and stops it (see `ServiceStack`). */
export interface ServiceModule {
  readonly http?: HttpMounts;
  /** What it reports at `/metrics` (read at scrape time). */
  readonly metrics?: MetricSources;
  /** Starts its work (threads, subscriptions, timers); resolves once it serves. */
  start(): Promise<void>;
  /**
   * The first phase of a stop, for every service before any of them stops, while the HTTP server drains:
   * answers what would hold a request open (webhook requests waiting for their run's response).
   */
  drain?(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The services of one process on one kernel, started one after the other, each on what the ones before it
 * provide; stopping is starting in reverse, the kernel last.
 */
export class ServiceStack {
  private readonly started: Array<Pick<ServiceModule, 'http' | 'drain' | 'stop'>>;

  constructor(private readonly kernel: { measure(sources: MetricSources): void; stop(): Promise<void> }) {
    this.started = [kernel];
  }

  async start<Service extends ServiceModule>(service: Service | Promise<Service>): Promise<Service> {
    const module = await service;
    await module.start();
    this.started.push(module);
    if (module.metrics) this.kernel.measure(module.metrics);
    return module;
  }

  /** The routers of the services started so far. */
  httpMounts(): HttpMounts {
    return this.started.reduce<HttpMounts>((mounts, module) => ({ ...mounts, ...module.http }), {});
  }

  async drain(): Promise<void> {
    for (const module of [...this.started].reverse()) await module.drain?.();
  }

  async stop(): Promise<void> {
    for (const module of this.started.splice(0).reverse()) await module.stop();
  }
}
