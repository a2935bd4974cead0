import { streamName } from '../../contracts/streams';
import type { LanguageModel } from '../../infra/ai/language-model/port';
import type { Sealer } from '../../infra/secrets/sealer';
import { systemAiDecider, type SystemAiSettings } from './domain/system-ai';
import type { AggregateLoader } from '../kit/handler';

export interface EndpointSettings {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly model: string;
  readonly timeoutMs: number;
}

/**
 * Which model each system's AI features use: the one an operator administrator set for the system, else the
 * deployment's (AI_URL), else none. Read from the system's settings stream at each call (a change applies to
 * the next call in every process); a client is made once per setting.
 */
export class SystemModels {
  private readonly clients = new Map<string, { readonly key: string; readonly model: LanguageModel }>();

  constructor(
    private readonly options: {
      readonly aggregates: AggregateLoader;
      readonly operatorTenant: string;
      readonly sealer: Sealer;
      readonly deployment: LanguageModel | null;
      readonly defaultTimeoutMs: number;
      readonly create: (settings: EndpointSettings) => LanguageModel;
    },
  ) {}

  async settingsOf(system: string): Promise<SystemAiSettings | null> {
    const stream = streamName('aiSettings', this.options.operatorTenant, system);
    return (await this.options.aggregates.load(stream, systemAiDecider)).state;
  }

  async modelFor(system: string): Promise<LanguageModel | null> {
    const settings = await this.settingsOf(system);
    if (settings === null) {
      this.clients.delete(system);
      return this.options.deployment;
    }
    const key = JSON.stringify(settings);
    const known = this.clients.get(system);
    if (known?.key === key) return known.model;
    const model = this.options.create({
      baseUrl: settings.baseUrl,
      apiKey: settings.sealedApiKey === null ? 'none' : this.options.sealer.open(settings.sealedApiKey),
      model: settings.model,
      timeoutMs: settings.timeoutMs ?? this.options.defaultTimeoutMs,
    });
    this.clients.set(system, { key, model });
    return model;
  }
}
