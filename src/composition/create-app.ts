import type { Server } from 'node:net';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ServiceConfig } from '../config/service-config.ts';
import { ComponentChecker, type Checker } from '../lifecycle/checker.ts';
import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../observability/logger.ts';
import { HttpMetrics } from '../observability/metrics.ts';
import { Tracing } from '../observability/tracer.ts';
import type { Clock } from '../ports/clock.ts';
import { AuthService } from '../service/auth-service.ts';
import { Notifier } from '../service/notifier.ts';
import { OrderService } from '../service/order-service.ts';
import { TokenService } from '../service/token-service.ts';
import { SessionScope, type TimerPort } from '../session/session-scope.ts';
import { createAdminHandler } from '../transports/http/admin-handler.ts';
import { closeHttpServer } from '../transports/http/http-shutdown.ts';
import type { HttpObservability } from '../transports/http/http-observability.ts';
import { Listener } from '../transports/http/listener.ts';
import { RestApi } from '../transports/http/rest-api.ts';
import type { ServerTimeouts } from '../transports/http/server-timeouts.ts';
import { createServer } from 'node:http';
import type { Backends } from './backends.ts';

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
}

/** A transport turns the core into a public server and knows how to shut it down gracefully. */
export interface PublicTransport {
  readonly server: Server;
  readonly shutdown: () => Promise<void>;
  /** Declared limits against slow and idle clients (our choice for spec 8's "timeouts: not shown"). */
  readonly timeouts: ServerTimeouts;
}
export type TransportFactory = (core: Core) => PublicTransport;

export interface AppOptions {
  readonly config: ServiceConfig;
  readonly logger: Logger;
  readonly backends: Backends;
  readonly transport: TransportFactory;
  readonly serviceName: string;
  /** Tests: in-memory span exporters, shorter session linger, fake timers, pinned clock. */
  readonly spanProcessors?: readonly SpanProcessor[];
  readonly sessionLingerMs?: number;
  readonly sessionCap?: number;
  readonly sessionTimers?: TimerPort;
  readonly clock?: Clock;
}

export interface App {
  readonly core: Core;
  /** Dependency order: run by runComponents (init in order, stop in reverse). */
  readonly components: readonly Component[];
  readonly checker: Checker;
  readonly api: Listener;
  readonly admin: Listener;
  readonly metrics: HttpMetrics;
  readonly transport: PublicTransport;
}

/**
 * The one composition root (STYLE: one createApp per executable, the test target built on it).
 * Constructors reject missing dependencies; nothing here connects: Init does, in the runner.
 */
export function createApp(options: AppOptions): App {
  const { config, logger, backends } = options;
  const tracing = new Tracing({ serviceName: options.serviceName, otlpEndpoint: config.otlpEndpoint, processors: options.spanProcessors ?? [] });
  const metrics = new HttpMetrics();
  const tokens = new TokenService(config.tokens.secret, config.tokens.expiryMs);
  const sessions = new SessionScope({
    recentCapacity: config.sessionRecent,
    logger,
    lingerMs: options.sessionLingerMs,
    cap: options.sessionCap,
    timers: options.sessionTimers,
  });
  const orders = new OrderService({
    repository: backends.repository,
    cache: backends.cache,
    publisher: backends.publisher,
    sessions,
    logger,
    clock: options.clock,
  });
  const auth = new AuthService(backends.credentials, tokens);
  const core: Core = {
    config,
    logger,
    tokens,
    auth,
    orders,
    api: new RestApi(auth, orders),
    sessions,
    observability: { tracer: tracing.tracer, metrics, logger },
  };

  const transport = options.transport(core);
  const api = new Listener({ name: 'api', server: transport.server, address: config.httpAddr, shutdown: transport.shutdown });
  const notifier = new Notifier(backends.subscriber, logger);
  // The checker sees every component; only database, cache and publisher implement health, and
  // only the public listener implements ready (spec 2.3, 3.2 rule 5, 3.3).
  const serviceComponents: Component[] = [tracing, ...backends.components, sessions, notifier, api];
  const checker = new ComponentChecker(serviceComponents);
  const adminServer = createServer(createAdminHandler(checker, metrics));
  const admin = new Listener({ name: 'admin', server: adminServer, address: config.adminAddr, shutdown: () => closeHttpServer(adminServer) });
  // The admin listener answers readiness for others; it does not report its own.
  const adminComponent: Component = { name: admin.name, run: (s) => admin.run(s), stop: () => admin.stop() };

  return { core, components: [...serviceComponents, adminComponent], checker, api, admin, metrics, transport };
}
