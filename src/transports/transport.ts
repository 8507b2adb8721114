import type { ServerResponse } from 'node:http';
import type { Server } from 'node:net';
import type { Tracer } from '@opentelemetry/api';
import type { ServiceConfig } from '../config/service-config.ts';
import type { HealthReport } from '../lifecycle/checker.ts';
import type { Logger } from '../observability/logger.ts';
import type { HttpMetrics } from '../observability/metrics.ts';
import type { RateLimitStore } from '../rate-limit/rate-limit-store.ts';
import type { TokenBucketLimiter } from '../rate-limit/token-bucket-limiter.ts';
import type { AuthService } from '../service/auth-service.ts';
import type { OrderService } from '../service/order-service.ts';
import type { TokenService } from '../service/token-service.ts';
import type { SessionScope } from '../session/scope.ts';
import type { PlatformTimeouts } from './http/server/platform-timeouts.ts';
import type { ServerTimeouts } from './http/server/server-timeouts.ts';

/**
 * The contract between the composition root and the three transports, transport-neutral: the
 * composition root (composition/create-app.ts) builds a Core and hands it to the executable's
 * TransportFactory. It lives here, not in composition/, so that transports import nothing from the
 * composition root (.dependency-cruiser.cjs, transports-do-not-know-composition).
 */

/**
 * What a transport is built from: the core services, shared by all three executables. A transport
 * builds its own protocol objects from them (REST: http/rest/rest-parts.ts; gRPC: grpc/grpc-handler.ts).
 */
export interface Core {
  readonly config: ServiceConfig;
  readonly logger: Logger;
  readonly tokens: TokenService;
  readonly auth: AuthService;
  readonly orders: OrderService;
  readonly sessions: SessionScope;
  readonly tracer: Tracer;
  /** The service's metrics registry and its request families (spec 4.5). */
  readonly metrics: HttpMetrics;
  /** The readiness report of the whole service (what /readyz answers), for a transport's own health service. */
  readonly readiness: () => Promise<HealthReport>;
  /**
   * The rate-limit buckets (spec 4.3, 8): this process's own, and the shared store when
   * RATE_LIMIT_STORE=redis (rule LIMIT-rate-store). Keyed per client by the transport.
   */
  readonly rateLimits: { readonly local: TokenBucketLimiter; readonly shared?: RateLimitStore };
}

/** How a transport builds its server: chosen in composition, and not services, so not in Core. */
export interface ServerChoices {
  /** Tests only: shorter platform-enforced timeouts (undefined: the declared ones). */
  readonly platformTimeouts?: PlatformTimeouts;
  /** The ServerResponse class of every HTTP/1.1 server, when the speed ring gives one; Node's own when absent. */
  readonly http1Response?: typeof ServerResponse;
}

/** A transport turns the core into a public server and knows how to shut it down gracefully. */
export interface PublicTransport {
  readonly server: Server;
  readonly shutdown: () => Promise<void>;
  /** Declared limits against slow and idle clients (our choice for spec 8's "timeouts: not shown"). */
  readonly timeouts: ServerTimeouts;
}
export type TransportFactory = (core: Core, choices?: ServerChoices) => PublicTransport;
