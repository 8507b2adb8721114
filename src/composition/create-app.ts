/**
 * The one composition root: every executable, the in-process test harness and the bench build the service
 * here (one createApp per process). Constructors reject what is missing; nothing here connects: init does,
 * in the runner.
 */
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ServiceConfig } from '../config/service.ts';
import { ComponentChecker, type Checker } from '../lifecycle/checker.ts';
import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../observability/logger.ts';
import { HttpMetrics, registerOutboxMetrics, registerServiceMetrics } from '../observability/metrics.ts';
import { Tracing } from '../observability/tracer.ts';
import type { Clock } from '../ports/clock.ts';
import type { Timers } from '../ports/timers.ts';
import { AuthService } from '../service/auth-service.ts';
import { Notifier } from '../service/notifier.ts';
import { OrderService } from '../service/order-service.ts';
import { OutboxRelay, type OutboxRelayOptions } from '../service/outbox-relay.ts';
import { TokenService } from '../service/token-service.ts';
import { SessionScope } from '../session/scope.ts';
import { createAdminHandler, type AdminRoutes } from '../transports/http/admin/admin-handler.ts';
import { closeHttpServer, trackConnections } from '../transports/http/server/shutdown.ts';
import { Listener } from '../transports/http/server/listener.ts';
import type { PlatformTimeouts } from '../transports/http/server/timeouts.ts';
import { createServer } from 'node:http';
import type { Registry } from 'prom-client';
import { TokenBucketLimiter } from '../rate-limit/store.ts';
import type { Core, PublicTransport, TransportFactory } from '../transports/transport.ts';
import type { Backends } from './backends.ts';
import type { SpeedRing } from './speed-hooks.ts';

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
  readonly sessionTimers?: Timers;
  readonly clock?: Clock;
  /** Embedded mode only: the ring's /simulator, /control and /console routes on the admin listener (composition/embedded.ts). */
  readonly adminRoutes?: (registry: Registry, tracer: Core['tracer']) => AdminRoutes;
  /** Tests: faster relay polling or backoff. */
  readonly relayOptions?: OutboxRelayOptions;
  /** Tests: shorter timeouts that Node's servers enforce (http/server/timeouts.ts), to see them enforced fast. */
  readonly platformTimeouts?: PlatformTimeouts;
  /** The opt-in speed ring (speed-hooks.ts); the plain core without it. */
  readonly speed?: SpeedRing;
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
  readonly relay: OutboxRelay;
}

export function createApp(options: AppOptions): App {
  const { config, logger, backends, speed = {} } = options;
  const tracing = new Tracing({
    serviceName: options.serviceName,
    otlpEndpoint: config.otlpEndpoint,
    processors: options.spanProcessors ?? [],
    logger,
    unexported: speed.unexportedTracer,
  });
  const metrics = new HttpMetrics();
  const clock = options.clock;
  // Token expiry follows the service clock (the simulator's, when embedded).
  const tokens = new (speed.tokenService ?? TokenService)(
    config.tokens.secret,
    config.tokens.expiryMs,
    clock === undefined ? undefined : () => clock.now().getTime(),
  );
  const sessions = new SessionScope({
    recentCapacity: config.sessionRecent,
    logger,
    lingerMs: options.sessionLingerMs,
    cap: options.sessionCap,
    timers: options.sessionTimers,
  });
  const orders = new OrderService({
    repository: backends.repository,
    cache: speed.orderCache?.(backends.cache, clock) ?? backends.cache,
    sessions,
    logger,
    clock: options.clock,
  });
  const auth = new AuthService(backends.credentials, tokens);
  // Burst = RATE_LIMIT_RPS (rule LIMIT-rate-keying); the shared store only when asked for (rule LIMIT-rate-store).
  const bucket = { rate: config.rateLimitRps, burst: config.rateLimitRps };
  const shared = config.rateLimitStore === 'redis' ? backends.sharedRateLimit?.(bucket) : undefined;
  if (config.rateLimitStore === 'redis' && shared === undefined)
    throw new Error('RATE_LIMIT_STORE=redis: these backends have no shared store');
  const core: Core = {
    config,
    logger,
    tokens,
    auth,
    orders,
    sessions,
    tracer: tracing.tracer,
    metrics,
    // The checker needs the transport's listener, so it is made after the transport: bound late.
    readiness: () => checker.ready(),
    rateLimits: { local: new TokenBucketLimiter(bucket.rate, bucket.burst), shared },
  };

  const transport = options.transport(core, {
    // Undefined (production) gives the declared values: every transport reads these with `??`.
    platformTimeouts: options.platformTimeouts,
    http1Response: speed.http1Response,
  });
  // A bound on what clients can make the process hold, whatever they do (rule LIMIT-connections).
  const api = new Listener({
    name: 'api',
    server: transport.server,
    address: config.httpAddr,
    shutdown: transport.shutdown,
    maxConnections: config.maxConnections,
  });
  const notifier = new Notifier(backends.subscriber, backends.ledger, logger);
  const relay = new OutboxRelay(backends.outbox, backends.publisher, logger, { ...options.relayOptions, clock: options.clock });
  registerOutboxMetrics(metrics.registry, relay);
  registerServiceMetrics(metrics.registry, sessions, backends.metrics);
  // Stop runs in reverse (rules LIFE-4-shutdown, EVT-4-notifier-stop): the API finishes its requests, then the relay
  // flushes the outbox, then the notifier drains what the relay just published, then the backends go.
  // The checker sees every component; only database, cache and publisher implement health (the
  // publisher's includes the outbox backlog), and only the public listener implements ready
  // (spec 2.3, 3.2 rule 5, 3.3).
  const serviceComponents: Component[] = [
    tracing,
    ...backends.components.map((c) => (c.name === 'publisher' ? withBacklogHealth(c, relay) : c)),
    sessions,
    notifier,
    relay,
    ...(shared === undefined ? [] : [shared]),
    api,
  ];
  const checker = new ComponentChecker(serviceComponents);
  const adminServer = createServer(createAdminHandler(checker, metrics, options.adminRoutes?.(metrics.registry, tracing.tracer)));
  trackConnections(adminServer);
  const admin = new Listener({
    name: 'admin',
    server: adminServer,
    address: config.adminAddr,
    shutdown: () => closeHttpServer(adminServer),
  });
  // The admin listener answers readiness for others; it does not report its own.
  const adminComponent: Component = { name: admin.name, run: (s) => admin.run(s), stop: () => admin.stop() };

  return { core, components: [...serviceComponents, adminComponent], checker, api, admin, metrics, transport, relay };
}

/**
 * The publisher's health node reports the broker and, past the relay's thresholds, the outbox
 * backlog (rule EVT-7-delivery): events that do not reach the broker are the publisher's failure either way.
 */
function withBacklogHealth(publisher: Component, relay: OutboxRelay): Component {
  return {
    name: publisher.name,
    init: publisher.init && (() => publisher.init!()),
    run: publisher.run && ((signal) => publisher.run!(signal)),
    stop: publisher.stop && (() => publisher.stop!()),
    ready: publisher.ready && (() => publisher.ready!()),
    async health() {
      await publisher.health?.();
      await relay.backlogHealth();
    },
  };
}
