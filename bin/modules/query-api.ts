import { API_BASE } from '../../infra/http/operations';
import { createQueryRouter } from '../../query-api/app';
import { apiDocsRouter, oauthMetadataRouter, type SemanticSearch } from '../../query-api/app';
import { loadApiDescriptions } from '../api-descriptions';
import type { Kernel } from '../kernel';
import type { ReadSide } from '../read-consistency';
import type { ServiceModule } from '../service-module';

/** The query API (its routes, the API description pages and the OAuth metadata); it runs nothing of its own. */
export function queryApiService(
  kernel: Kernel,
  reads: ReadSide,
  semantic: SemanticSearch | undefined,
): ServiceModule {
  return {
    http: {
      wellKnown: oauthMetadataRouter(),
      pages: apiDocsRouter(API_BASE),
      query: createQueryRouter({
        descriptions: loadApiDescriptions(),
        readModels: kernel.readModels,
        consistency: reads.consistency,
        blobs: kernel.adapters.blobs,
        hookPublication: kernel.hookAddresses,
        ...(semantic && { semantic }),
        logger: kernel.logger.child({ component: 'query-api' }),
        credentialActivity: (tenant, credentials) => kernel.meter.activity(tenant, credentials),
        accessTokens: kernel.accessTokens,
        deliveries: () => kernel.deliveries(),
        // Only positions and times are read: the log as stored, no personal value opened.
        events: kernel.adapters.events.sealed,
        pastListCountCap: kernel.config.PAST_LIST_COUNT_CAP,
      }),
    },
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
  };
}
