import type { HookPublication } from '../contracts/integrator';
import type { HookReceiver } from './hooks/http-receiver';
import type { AttemptLog } from '../infra/attempts/port';
import type { BlobStore } from '../infra/blob-store/port';
import type { DeliveryStore } from '../infra/deliveries/port';
import type { EventStore } from '../infra/event-store/port';
import type { RecordedEvent } from '../contracts/events/envelope';
import type { Logger } from '../infra/logging';
import type { Sealer } from '../infra/secrets/sealer';
import type { ProviderSettings, SocialProvider } from '../contracts/social';
import type { AccessTokens } from '../infra/secrets/access-tokens';
import type { OutboundHttp } from '../infra/outbound/port';
import type { CommandReads } from '../infra/read-store/command-reads';
import type { KernelDeps } from './kit/kernel-deps';
import type { AiSlots } from './ai/ai-slots';
import type { MeteredModel } from './ai/metered-model';
import type { AiJobs } from './ai/jobs';
import type { SystemModels } from './ai/system-models';
import type { DeadLetters } from '../projections/dead-letters';

/** What erasure needs of the event store that seals personal values (`PersonalDataEventStore`). */
export interface PersonalData {
  erase(subject: string, erasedAt: number): Promise<boolean>;
  readonly sealed: Pick<EventStore, 'readStream'>;
  /** An event read from `sealed`, its personal values opened (or erased). */
  reveal(event: RecordedEvent): Promise<RecordedEvent>;
}

/** What the command routes need, wired by the composition root. */
export interface CommandDeps extends KernelDeps {
  readonly reads: CommandReads;
  /** Crypto-shredding: destroying a subject's data key, and the events as stored (to see what was sealed). */
  readonly personalData: PersonalData;
  /** Calls to user-configured addresses, behind the SSRF guard. */
  readonly outbound: OutboundHttp;
  /** File contents; events carry only their metadata and hash. */
  readonly blobs: BlobStore;
  readonly uploads: UploadLimits;
  readonly logger: Logger;
  /** Social sign-in providers that are configured, with their client credentials. */
  readonly socialLogin: Partial<Record<SocialProvider, ProviderSettings>>;
  /** Signs OAuth access tokens. */
  readonly accessTokens: AccessTokens;
  /** Seals secrets kept at rest (TOTP seeds) and derives signing keys. */
  readonly sealer: Sealer;
  /**
   * Sign-in attempts (BF-01, TOTP-04) and introspection calls (OA-34), shared by every command-api process of
   * the deployment.
   */
  readonly attempts: AttemptLog;
  /** Token introspections one OAuth client may make per minute (OA-34). */
  readonly introspectionsPerMinute: number;
  /** Session lifetimes: idle (sliding) and absolute. */
  readonly sessions: { readonly idleMs: number; readonly maxAgeMs: number };
  /**
   * Webhooks: where their addresses point, the clock of their time-driven rules, and (where this process
   * receives them) delivery to one from inside the platform.
   */
  readonly hooks: HookPublication & {
    readonly now: () => Date;
    readonly deliverJson?: HookReceiver['deliverJson'];
  };
  /**
   * Outgoing subscriptions: whether their URLs may name private addresses (`OUTBOUND_ALLOW_PRIVATE`), how
   * many one system may have (`SUBSCRIPTIONS_PER_SYSTEM`), their delivery log (a redelivery looks up the
   * event there), and where in the event log a time falls (a replay from a time).
   */
  readonly subscriptions: {
    readonly allowPrivateUrls: boolean;
    readonly maxPerSystem: number;
    readonly deliveries: () => DeliveryStore;
    readonly positionBefore: (time: Date) => Promise<bigint>;
  };
  /** The system whose administrators set up other systems. */
  readonly operatorTenant: string;
  /** Events projections went past (listed and retried by operator administrators). */
  readonly deadLetters: DeadLetters;
  /** AI features: every model call, metered against the system's AI token balance. */
  readonly ai: {
    readonly model: MeteredModel;
    readonly jobs: AiJobs;
    /** Every model call takes one (jobs, previews, generations): shares per system and per credential. */
    readonly slots: AiSlots;
    /** How long a preview or a generation waits for a slot before a 503 (`AI_TIMEOUT_MS`). */
    readonly slotWaitMs: number;
    /** How long an execute waits for its job before answering with its progress. */
    readonly executeWaitMs: number;
    /** The model each system uses, and the deployment's (AI_URL; null: none). */
    readonly systems: SystemModels;
    readonly deployment: {
      readonly baseUrl: string;
      readonly model: string;
      readonly timeoutMs: number;
    } | null;
  };
}

/** What an upload may be. */
export interface UploadLimits {
  readonly maxBytes: number;
  /** Media types (`type/subtype`, lower case) an upload may declare. */
  readonly contentTypes: ReadonlySet<string>;
}
