import { ClientAddressResolver } from '../../../rate-limit/client-address.ts';
import { HttpRateLimiter } from '../../../rate-limit/limiter.ts';
import type { TokenService } from '../../../service/token-service.ts';
import type { Core } from '../../transport.ts';
import type { HttpObservability } from './http-observability.ts';
import { RestApi } from './rest-api.ts';

/** What every REST transport (node:http, Koa, the one-port server's REST side) is built from. */
export interface RestParts {
  readonly api: RestApi;
  readonly tokens: TokenService;
  readonly observability: HttpObservability;
  /** The one REST rate limiter, keyed per client (rule LIMIT-rate-keying) over the core's buckets. */
  readonly limiter: HttpRateLimiter;
}

/** Builds the REST objects from the core services; each executable has one transport, so one set. */
export function restParts(core: Core): RestParts {
  return {
    api: new RestApi(core.auth, core.orders),
    tokens: core.tokens,
    observability: { tracer: core.tracer, metrics: core.metrics, logger: core.logger },
    limiter: new HttpRateLimiter({
      resolver: new ClientAddressResolver(core.config.trustProxy),
      local: core.rateLimits.local,
      shared: core.rateLimits.shared,
      logger: core.logger,
    }),
  };
}
