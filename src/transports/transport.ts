import type { Server } from 'node:net';
import type { ServiceConfig } from '../config/service-config.ts';
import type { HealthReport } from '../lifecycle/checker.ts';
import type { Logger } from '../observability/logger.ts';
import type { AuthService } from '../service/auth-service.ts';
import type { OrderService } from '../service/order-service.ts';
import type { TokenService } from '../service/token-service.ts';
import type { SessionScope } from '../session/session-scope.ts';
import type { HttpObservability } from './http/rest/http-observability.ts';
import type { HttpRateLimiter } from '../rate-limit/http-rate-limiter.ts';
import type { PlatformTimeouts } from './http/server/platform-timeouts.ts';
import type { RestApi } from './http/rest/rest-api.ts';
import type { ServerTimeouts } from './http/server/server-timeouts.ts';

/**
 * The contract between the composition root and the three transports, transport-neutral: the
 * composition root (composition/create-app.ts) builds a Core and hands it to the executable's
 * TransportFactory. It lives here, not in composition/, so that transports import nothing from the
 * composition root (.dependency-cruiser.cjs, transports-do-not-know-composition).
 */

/** What a transport is built from: the core, shared by all three executables. */
export interface Core {
  readonly config: ServiceConfig;
  readonly logger: Logger;
  readonly tokens: TokenService;
  readonly auth: AuthService;
  readonly orders: OrderService;
  readonly api: RestApi;
  readonly sessions: SessionScope;
  readonly observability: HttpObservability;
  /** The readiness report of the whole service (what /readyz answers), for a transport's own health service. */
  readonly readiness: () => Promise<HealthReport>;
  /** The REST rate limiter every HTTP transport puts around its router (spec 4.3, 8). */
  readonly rateLimiter: HttpRateLimiter;
  /** Tests only: shorter platform-enforced timeouts for the transport's server (undefined: the declared ones). */
  readonly platformTimeouts?: PlatformTimeouts;
}

/** A transport turns the core into a public server and knows how to shut it down gracefully. */
export interface PublicTransport {
  readonly server: Server;
  readonly shutdown: () => Promise<void>;
  /** Declared limits against slow and idle clients (our choice for spec 8's "timeouts: not shown"). */
  readonly timeouts: ServerTimeouts;
}
export type TransportFactory = (core: Core) => PublicTransport;
