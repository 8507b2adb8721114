/**
 * What `--embedded` adds to composition, as the embedded ring (embedded/ at the repo root) provides it:
 * in-memory backends on a simulated clock, and the simulator, test-control and console routes on the admin listener
 * (rules SIM-*, CONSOLE-*). Declared here so that src/ never names the ring's modules: start-service.ts
 * loads it with one dynamic import, only when asked for.
 */
import type { DestinationStream } from 'pino';
import type { Tracer } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import type { ServiceConfig } from '../config/service.ts';
import type { Logger } from '../observability/logger.ts';
import type { Clock } from '../ports/clock.ts';
import type { Timers } from '../ports/timers.ts';
import type { AdminRoutes } from '../transports/http/admin/admin-handler.ts';
import type { Backends } from './backends.ts';

export interface EmbeddedRing {
  /** runMain, before its logger exists: stdout as the console's log tail sees it (rule CONSOLE-feed). */
  tee(stdout: DestinationStream): DestinationStream;
  start(options: EmbeddedOptions): Promise<Embedded>;
}

export interface EmbeddedOptions {
  readonly logger: Logger;
  readonly config: ServiceConfig;
  /** The demo logins of spec 3.5 (the executables seed them; tests make their own users). */
  readonly seedDemoUsers: boolean;
  /** A test's pinned clock: the fakes run on it instead of the simulated time. */
  readonly clock?: Clock;
}

export interface Embedded {
  readonly backends: Backends;
  /** The service clock and the session timers: the simulated time the simulator moves (rule SIM-clock-advance). */
  readonly clock: Clock;
  readonly timers: Timers;
  /**
   * The admin listener's /simulator, /control and /console routes, reading the service's metrics registry;
   * the tracer is the one the test-control API arms a tracing-layer fault in (rule CONTROL-fault).
   */
  adminRoutes(registry: Registry, tracer: Tracer): AdminRoutes;
  /** Logs what an operator of `npm start` needs once the listeners are bound, the demo logins, and returns them (`user / password`). */
  announce(): readonly string[];
}
