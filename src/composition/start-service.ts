import type { Server } from 'node:net';
import type { Env } from '../config/env.ts';
import { loadServiceConfig, type ServiceConfig } from '../config/service.ts';
import { runComponents } from '../lifecycle/runner.ts';
import type { LogTail } from '../observability/log-tail.ts';
import type { Logger } from '../observability/logger.ts';
import type { Clock } from '../ports/clock.ts';
import type { Backends } from './backends.ts';
import type { TransportFactory } from '../transports/transport.ts';
import { createApp, type App, type AppOptions } from './create-app.ts';
import type { EmbeddedBackends } from './embedded-backends.ts';
import { createRealBackends, type RealBackendIsolation } from './real-backends.ts';
import { SimulatedTime } from '../simulator/simulated-time.ts';
import { Simulator } from '../simulator/simulator.ts';

export interface ServiceOptions {
  readonly serviceName: string;
  readonly transport: TransportFactory;
  readonly env: Env;
  readonly logger: Logger;
  /** In-memory fakes instead of Postgres/Redis/NATS (spec 3.5); loaded only when asked for. */
  readonly embedded: boolean;
  /** Embedded only: the demo logins of spec 3.5 (the executables seed them; tests make their own users). */
  readonly seedDemoUsers?: boolean;
  /** Real backends only: a private schema, key prefix and subject (tests and bench run side by side). */
  readonly isolation?: RealBackendIsolation;
  /** Tests: span exporters, session linger and cap, fake timers, pinned clock. */
  readonly app?: Pick<AppOptions, 'spanProcessors' | 'sessionLingerMs' | 'sessionCap' | 'sessionTimers' | 'clock' | 'platformTimeouts'>;
  /** Embedded only: the last log lines for the console page (runMain tees stdout into it). */
  readonly logTail?: LogTail;
  /** Aborting it stops the service, as `stop()` does (runMain wires SIGTERM/SIGINT here). */
  readonly signal?: AbortSignal;
}

export interface BoundPorts {
  readonly api: number;
  readonly admin: number;
}

export interface RunningService {
  readonly app: App;
  readonly config: ServiceConfig;
  readonly backends: Backends;
  /** Set when embedded: the fakes, with their trouble switches. */
  readonly fakes: EmbeddedBackends | undefined;
  /** Set when embedded: the simulator behind the admin listener's /simulator routes. */
  readonly simulator: Simulator | undefined;
  /** Resolves once both listeners are bound; rejects if the run fails first (a port in use). */
  readonly ready: Promise<BoundPorts>;
  /** Settles when every component has stopped: rejects with the first run failure (spec 3.4). */
  readonly done: Promise<void>;
  /** Aborts the run signal (as SIGTERM does) and waits for every run and stop; never rejects. */
  stop(): Promise<void>;
}

/**
 * The one place that composes and runs the service: the executables (runMain), the in-process test
 * harness, the conformance targets and the bench all start it here. Configuration errors reject;
 * everything else (connect failures, a port in use) shows in `ready` and `done`.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { logger, env } = options;
  const config = loadServiceConfig(env, { embedded: options.embedded });
  const embedded = options.embedded ? await startEmbedded(options) : undefined;
  const backends = embedded?.fakes ?? (await createRealBackends(env, logger, options.isolation));
  const app = createApp({
    ...options.app,
    // Embedded: the clock the fakes run on (the simulated time unless the test pinned its own).
    clock: embedded?.clock ?? options.app?.clock,
    sessionTimers: options.app?.sessionTimers ?? embedded?.time,
    simulator: embedded?.simulator,
    // The console page (rule CONSOLE-page) comes with the simulator: embedded mode only.
    console:
      embedded === undefined ? undefined : { time: embedded.time, logTail: options.logTail, cacheTtlMs: embedded.fakes.cacheFake.ttlMs },
    config,
    logger,
    backends,
    transport: options.transport,
    serviceName: options.serviceName,
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
    fakes: embedded?.fakes,
    simulator: embedded?.simulator,
    ready,
    done,
    async stop() {
      controller.abort();
      await done.catch(() => undefined);
    },
  };
}

/**
 * Embedded mode: the in-memory fakes, on a clock and timers the simulator can move (rule SIM-clock-advance; a
 * test's own pinned clock or fake timers win), and the simulator over them. Real backends run on the system
 * clock and never get a simulator.
 */
async function startEmbedded(
  options: ServiceOptions,
): Promise<{ readonly time: SimulatedTime; readonly clock: Clock; readonly fakes: EmbeddedBackends; readonly simulator: Simulator }> {
  const time = new SimulatedTime();
  const clock = options.app?.clock ?? time;
  // Dynamic import: an image or install without fakes/ still starts when not --embedded.
  const { createEmbeddedBackends } = await import('./embedded-backends.ts');
  const fakes = await createEmbeddedBackends(options.logger, { seedDemoUsers: options.seedDemoUsers ?? false, clock });
  const simulator = new Simulator({ components: [fakes.store, fakes.cacheFake, fakes.bus], time, logger: options.logger });
  return { time, clock, fakes, simulator };
}

function listening(server: Server): Promise<void> {
  return new Promise((resolve) => server.once('listening', () => resolve()));
}
