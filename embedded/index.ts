// The embedded ring as composition loads it with --embedded (src/composition/start-service.ts, through the
// interface src/composition/embedded.ts declares): the in-memory fakes on one simulated time, the simulator
// over them, and the simulator, test-control and console routes on the admin listener (README.md here).
import type { EmbeddedRing } from '../src/composition/embedded.ts';
import { createEmbeddedBackends } from './backends.ts';
import { CONTROL_LOG, Control } from './control/control.ts';
import { controlRoutes } from './control/control-routes.ts';
import { ConsoleFeed } from './console/feed.ts';
import { LogTail } from './console/log-tail.ts';
import { consoleRoutes } from './console/routes.ts';
import { SimulatedTime } from './simulated-time.ts';
import { simulatorRoutes } from './simulator-routes.ts';
import { Simulator } from './simulator.ts';

/** One ring per service: it keeps the log tail runMain tees stdout into (rule CONSOLE-feed). */
export function createRing(): EmbeddedRing {
  let tail: LogTail | undefined;
  let controlLog: LogTail | undefined;
  return {
    tee(stdout) {
      tail = new LogTail();
      // The test-control API's longer log (rule CONTROL-logs): what a black-box run reads as the service log.
      controlLog = new LogTail(CONTROL_LOG);
      return tail.tee(controlLog.tee(stdout));
    },
    async start({ logger, config, seedDemoUsers, clock }) {
      const time = new SimulatedTime();
      // The fakes run on the service clock, so an advance expires cache entries too (rule SIM-clock-advance).
      const fakes = await createEmbeddedBackends(logger, { seedDemoUsers, clock: clock ?? time });
      const simulator = new Simulator({ components: [fakes.store, fakes.cacheFake, fakes.bus], time, logger });
      return {
        backends: fakes,
        clock: clock ?? time,
        timers: time,
        adminRoutes(registry, tracer) {
          // Built with the service (rule CONSOLE-page), so the console's first look sees every answer since start.
          const feed = new ConsoleFeed({
            registry,
            time,
            logTail: tail,
            tokenExpiryMs: config.tokens.expiryMs,
            cacheTtlMs: fakes.cacheFake.ttlMs,
          });
          const simulatorRoute = simulatorRoutes(simulator);
          const consoleRoute = consoleRoutes(feed);
          // The test-control API (rules CONTROL-*): what a black-box conformance run reads and provisions.
          const controlRoute = controlRoutes(
            new Control({ store: fakes.store, cache: fakes.cacheFake, bus: fakes.bus, tracer, logger, log: controlLog }),
          );
          return async (req, res, url) =>
            (await simulatorRoute(req, res, url)) || (await controlRoute(req, res, url)) || consoleRoute(req, res, url);
        },
        announce() {
          const demo = fakes.demoUsers;
          const logins = demo.map((u) => `${u.username} / ${u.password}`);
          logger.info({ users: demo.map((u) => u.username) }, `embedded mode: in-memory backends; demo logins ${logins.join(', ')}`);
          return logins;
        },
      };
    },
  };
}
