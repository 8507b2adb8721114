/**
 * The contract between the composition root and the three transports: composition/create-app.ts builds a
 * Core and hands it to the executable's TransportFactory. Here, not in composition/, so transports import
 * nothing from it (transports-do-not-know-composition in .dependency-cruiser.cjs).
 */
import type { ServerResponse } from 'node:http';
import type { Server } from 'node:net';
import type { Tracer } from '@opentelemetry/api';
import type { ServiceConfig } from '../config/service.ts';
import type { HealthReport } from '../lifecycle/checker.ts';
import type { Logger } from '../observability/logger.ts';
import type { HttpMetrics } from '../observability/metrics.ts';
import type { RateLimitStore, TokenBucketLimiter } from '../rate-limit/store.ts';
import type { AuthService } from '../service/auth-service.ts';
import type { OrderService } from '../service/order-service.ts';
import type { TokenService } from '../service/token-service.ts';
import type { SessionScope } from '../session/scope.ts';
import type { PlatformTimeouts, ServerTimeouts } from './http/server/timeouts.ts';

/** The core services a transport builds its protocol objects from (http/rest/api.ts restParts, grpc/handler.ts). */
export interface Core {
  readonly config: ServiceConfig;
  readonly logger: Logger;
  readonly tokens: TokenService;
  readonly auth: AuthService;
  readonly orders: OrderService;
  readonly sessions: SessionScope;
  readonly tracer: Tracer;
  readonly metrics: HttpMetrics;
  /** What /readyz answers, for a transport's own health service. */
  readonly readiness: () => Promise<HealthReport>;
  /** This process's buckets, and the shared store when RATE_LIMIT_STORE=redis (rule LIMIT-rate-store). */
  readonly rateLimits: { readonly local: TokenBucketLimiter; readonly shared?: RateLimitStore };
}

/** How a transport builds its server, chosen in composition (not services, so not in Core). */
export interface ServerChoices {
  /** Tests only: shorter platform-enforced timeouts (undefined: the declared ones). */
  readonly platformTimeouts?: PlatformTimeouts;
  /** The speed ring's ServerResponse class for every HTTP/1.1 server; Node's own when absent. */
  readonly http1Response?: typeof ServerResponse;
}

export interface PublicTransport {
  readonly server: Server;
  /** The graceful stop (rule LIFE-4-shutdown). */
  readonly shutdown: () => Promise<void>;
  /** Declared limits against slow and idle clients (http/server/timeouts.ts). */
  readonly timeouts: ServerTimeouts;
}
export type TransportFactory = (core: Core, choices?: ServerChoices) => PublicTransport;
