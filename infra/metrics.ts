import { collectDefaultMetrics, Counter, Gauge, Registry, Summary } from 'prom-client';

export interface ProjectionLag {
  readonly projection: string;
  readonly version: number;
  /** Global positions between the store's head and the projection's checkpoint. */
  readonly lagPositions: number;
  readonly caughtUp: boolean;
}

/** Where this process's integrator stands (read at scrape time). */
export interface IntegratorProgress {
  /** Global positions between the event store head and the newest event the integrator has handled. */
  readonly lagPositions: number;
  readonly runsStarted: number;
  /** Scenario runs this integrator took to their end (succeeded, failed or stopped) since it began. */
  readonly runsFinished: number;
  /** Requests this integrator parked in their system's run backlog (see integrator/run-backlog.ts). */
  readonly runsParked: number;
  /** Systems whose run backlogs this integrator drains now. */
  readonly backlogsDraining: number;
  /** Outgoing deliveries this integrator made (answered 2xx) since it began. */
  readonly deliveriesMade: number;
  /** Outgoing delivery attempts under way in this integrator. */
  readonly deliveriesInFlight: number;
}

/**
 * Prometheus metrics: process defaults, projection lag in positions (read at scrape time) and in time, and the
 * integrator's lag and runs when this process runs it.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly visibleLag: Summary<'projection'>;
  private readonly aiCalls: Counter<'outcome'>;
  private readonly aiTokens: Counter;

  constructor(
    lag: () => Promise<readonly ProjectionLag[]>,
    integrator: () => Promise<IntegratorProgress | undefined> = () => Promise.resolve(undefined),
    /** Model calls of AI jobs under way in this process. */
    aiCallsInFlight: () => number = () => 0,
    /** Events each projection went past as dead letters, still unresolved (read at scrape time). */
    deadLetters: () => Promise<ReadonlyMap<string, number>> = () => Promise.resolve(new Map()),
  ) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'projection_dead_letters',
      help: 'Events a projection could not apply and went past, not yet retried (GET /api/dead-letter)',
      labelNames: ['projection'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [projection, count] of await deadLetters()) this.set({ projection }, count);
      },
    });
    this.aiCalls = new Counter({
      name: 'ai_model_calls_total',
      help: 'AI model calls by outcome: answered, cached (answered from kept answers), failed, refused (balance)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.aiTokens = new Counter({
      name: 'ai_tokens_spent_total',
      help: 'AI tokens spent by this process (as the model reported them)',
      registers: [this.registry],
    });
    new Gauge({
      name: 'ai_job_calls_in_flight',
      help: 'Model calls of AI execute jobs under way in this process',
      registers: [this.registry],
      collect() {
        this.set(aiCallsInFlight());
      },
    });
    this.visibleLag = new Summary({
      name: 'projection_visible_lag_seconds',
      help: 'Write-to-visible lag: from an event commit to its projection applying it (live events, last 60 s)',
      labelNames: ['projection'],
      percentiles: [0.5, 0.9, 0.99],
      maxAgeSeconds: 60,
      ageBuckets: 6,
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
    const integratorGauges: Array<[string, string, keyof IntegratorProgress]> = [
      [
        'integrator_lag_positions',
        'Global positions between the event store head and the newest event the integrator has handled',
        'lagPositions',
      ],
      [
        'integrator_runs_started',
        'Scenario runs this integrator process has started since it began',
        'runsStarted',
      ],
      [
        'integrator_runs_finished',
        'Scenario runs this integrator process has taken to their end (succeeded, failed or stopped) since it began',
        'runsFinished',
      ],
      [
        'integrator_runs_parked',
        "Requests this integrator process parked in their system's run backlog since it began (the system had its share in hand)",
        'runsParked',
      ],
      [
        'integrator_backlogs_draining',
        'Systems whose run backlogs this integrator process drains now',
        'backlogsDraining',
      ],
      [
        'integrator_deliveries_made',
        'Outgoing subscription deliveries this integrator process made (the receiver answered 2xx) since it began',
        'deliveriesMade',
      ],
      [
        'integrator_deliveries_in_flight',
        'Outgoing subscription delivery attempts under way in this integrator process',
        'deliveriesInFlight',
      ],
    ];
    for (const [name, help, figure] of integratorGauges)
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const progress = await integrator();
          if (progress) this.set(progress[figure]);
        },
      });
  }

  observeVisibleLag(projection: string, lagMs: number): void {
    this.visibleLag.observe({ projection }, lagMs / 1000);
  }

  observeAiCall(outcome: 'answered' | 'cached' | 'failed' | 'refused', tokens: number): void {
    this.aiCalls.inc({ outcome });
    if (tokens > 0) this.aiTokens.inc(tokens);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
