/**
 * The one place that composes and runs the service: the executables (runMain), the in-process test harness,
 * the conformance targets and the bench all start it here. Configuration errors reject; everything else
 * (connect failures, a port in use) shows in `ready` and `done`.
 */
import type { Server } from 'node:net';
import { readAll, type Env } from '../config/env.ts';
import { loadServiceConfig, type ServiceConfig } from '../config/service.ts';
import { runComponents } from '../lifecycle/runner.ts';
import type { Logger } from '../observability/logger.ts';
import type { Backends } from './backends.ts';
import type { TransportFactory } from '../transports/transport.ts';
import { createApp, type App, type AppOptions } from './create-app.ts';
import type { Embedded, EmbeddedRing } from './embedded.ts';
import { createRealBackends, realBackendConfig, type RealBackendIsolation } from './real-backends.ts';
import type { SpeedRing } from './speed-hooks.ts';

export interface ServiceOptions {
  readonly serviceName: string;
  readonly transport: TransportFactory;
  readonly env: Env;
  readonly logger: Logger;
  /**
   * In-memory fakes instead of Postgres/Redis/NATS (spec 3.5), with the simulator and console: the embedded
   * ring, loaded only when asked for (true), or the one runMain loaded to tee stdout into.
   */
  readonly embedded: boolean | EmbeddedRing;
  /** Embedded only: the demo logins of spec 3.5 (the executables seed them; tests make their own users). */
  readonly seedDemoUsers?: boolean;
  /** Real backends only: a private schema, key prefix and subject (tests and bench run side by side). */
  readonly isolation?: RealBackendIsolation;
  /** Tests: span exporters, session linger and cap, fake timers, pinned clock. */
  readonly app?: Pick<AppOptions, 'spanProcessors' | 'sessionLingerMs' | 'sessionCap' | 'sessionTimers' | 'clock' | 'platformTimeouts'>;
  /** Aborting it stops the service, as `stop()` does (runMain wires SIGTERM/SIGINT here). */
  readonly signal?: AbortSignal;
  /** The opt-in speed ring (speed-hooks.ts; runMain passes speed/'s); the plain core without it. */
  readonly speed?: SpeedRing;
}

export interface BoundPorts {
  readonly api: number;
  readonly admin: number;
}

export interface RunningService {
  readonly app: App;
  readonly config: ServiceConfig;
  readonly backends: Backends;
  /** Set when embedded: what the ring gave composition (its backends are the fakes). */
  readonly embedded: Embedded | undefined;
  /** Resolves once both listeners are bound; rejects if the run fails first (a port in use). */
  readonly ready: Promise<BoundPorts>;
  /** Settles when every component has stopped: rejects with the first run failure (spec 3.4). */
  readonly done: Promise<void>;
  /** Aborts the run signal (as SIGTERM does) and waits for every run and stop; never rejects. */
  stop(): Promise<void>;
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { logger, env } = options;
  // The service's variables and, without --embedded, the backends': every problem in one ConfigError (rule CONFIG-all-at-once).
  const { config, real } = readAll({
    config: () => loadServiceConfig(env, { embedded: options.embedded !== false }),
    real: () => (options.embedded === false ? realBackendConfig(env) : undefined),
  });
  const ring = options.embedded === true ? await loadEmbeddedRing() : options.embedded === false ? undefined : options.embedded;
  const embedded = await ring?.start({ logger, config, seedDemoUsers: options.seedDemoUsers ?? false, clock: options.app?.clock });
  const backends =
    embedded?.backends ?? (await createRealBackends(real ?? realBackendConfig(env), logger, options.isolation, options.speed));
  const app = createApp({
    ...options.app,
    // Embedded: the simulated time the simulator moves, unless the test pinned its own (rule SIM-clock-advance).
    clock: embedded?.clock ?? options.app?.clock,
    sessionTimers: options.app?.sessionTimers ?? embedded?.timers,
    adminRoutes: embedded?.adminRoutes,
    config,
    logger,
    backends,
    transport: options.transport,
    serviceName: options.serviceName,
    speed: options.speed,
  });
  const controller = new AbortController();
  if (options.signal?.aborted) controller.abort();
  options.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  const done = runComponents(app.components, controller.signal, logger);
  const stopped = done.then(
    // A guard: done resolves only after every run returned, and a listener's run returns only after its server's
    // 'listening' (which ready awaits, subscribed first), so ready has always resolved by then.
    () => Promise.reject(new Error(`${options.serviceName}: stopped before listening`)),
    (error: unknown) => Promise.reject(error),
  );
  const ready = Promise.race([
    // 'listening' only: a bind error surfaces through the run, named by its listener (`api: listen: …`).
    Promise.all([listening(app.api.server()), listening(app.admin.server())]).then(() => ({
      api: app.api.port(),
      admin: app.admin.port(),
    })),
    stopped,
  ]);
  // Callers await what they need; an unobserved rejection here must not crash the process. `done` is observed by
  // `stopped`'s handlers and `stopped` by the race's, so only `ready` needs one of its own.
  ready.catch(() => undefined);
  return {
    app,
    config,
    backends,
    embedded,
    ready,
    done,
    async stop() {
      controller.abort();
      await done.catch(() => undefined);
    },
  };
}

/**
 * The embedded ring (embedded/ at the repo root), loaded only with --embedded: the one place src/ names it,
 * so an install without it still runs on real backends.
 */
export async function loadEmbeddedRing(): Promise<EmbeddedRing> {
  const { createRing } = await import('../../embedded/index.ts');
  return createRing();
}

function listening(server: Server): Promise<void> {
  return new Promise((resolve) => server.once('listening', () => resolve()));
}
