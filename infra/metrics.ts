import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

export interface ProjectionLag {
  readonly projection: string;
  readonly version: number;
  /** Global positions between the store's head and the projection's checkpoint. */
  readonly lagPositions: number;
  readonly caughtUp: boolean;
}

/** Prometheus metrics: process defaults, projection lag (read at scrape time), and request counts. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'status'>;

  constructor(lag: () => Promise<readonly ProjectionLag[]>) {
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method and status',
      labelNames: ['method', 'status'],
      registers: [this.registry],
    });
    new Gauge({
      name: 'projection_lag_positions',
      help: 'Global positions between the event store head and the projection checkpoint',
      labelNames: ['projection', 'version'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const row of await lag())
          this.set({ projection: row.projection, version: String(row.version) }, row.lagPositions);
      },
    });
    new Gauge({
      name: 'projection_caught_up',
      help: '1 once the projection has caught up with the event store at least once',
      labelNames: ['projection', 'version'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const row of await lag())
          this.set({ projection: row.projection, version: String(row.version) }, row.caughtUp ? 1 : 0);
      },
    });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
