// The embedded ring's entry: what composition loads with --embedded (src/composition/embedded.ts).
import type { EmbeddedRing } from '../src/composition/embedded.ts';
import { createEmbeddedBackends } from './backends.ts';
import { ANNOUNCED_MSG, ConsoleFeed } from './console/feed.ts';
import { LogTail } from './console/log-tail.ts';
import { consoleRoutes } from './console/routes.ts';
import { SimulatedTime } from './simulated-time.ts';
import { simulatorRoutes } from './simulator-routes.ts';
import { Simulator } from './simulator.ts';

/**
 * The embedded ring as composition loads it (src/composition/start-service.ts, only with --embedded): the
 * in-memory fakes on one simulated time, the simulator over them and the console page beside it on the
 * admin listener (README.md here). One ring per service: it keeps the log tail runMain tees stdout into.
 */
export function createRing(): EmbeddedRing {
  let tail: LogTail | undefined;
  return {
    tee(stdout) {
      // The notifier's `order placed` lines are counted: the console's events announced (rule CONSOLE-feed).
      tail = new LogTail({ count: [ANNOUNCED_MSG] });
      return tail.tee(stdout);
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
        adminRoutes(registry) {
          // The console page comes with the simulator (rule CONSOLE-page), built with the service so its
          // first look sees every answer since start.
          const feed = new ConsoleFeed({
            registry,
            time,
            logTail: tail,
            tokenExpiryMs: config.tokens.expiryMs,
            cacheTtlMs: fakes.cacheFake.ttlMs,
          });
          const simulatorRoute = simulatorRoutes(simulator);
          const consoleRoute = consoleRoutes(feed);
          return async (req, res, url) => (await simulatorRoute(req, res, url)) || consoleRoute(req, res, url);
        },
        announce() {
          const demo = fakes.demoUsers;
          logger.info(
            { users: demo.map((u) => u.username) },
            `embedded mode: in-memory backends; demo logins ${demo.map((u) => `${u.username} / ${u.password}`).join(', ')}`,
          );
        },
      };
    },
  };
}
