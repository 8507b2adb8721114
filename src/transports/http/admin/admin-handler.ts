import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Checker, HealthReport } from '../../../lifecycle/checker.ts';
import type { HttpMetrics } from '../../../observability/metrics.ts';

/**
 * The admin listener's routes (spec 4.2), written against the Checker interface so every executable
 * serves them the same way. Meant for the cluster network only: it names components.
 */
/** The liveness answer: the health report's shape with no component consulted. */
const LIVE: HealthReport = { clean: true, nodes: null };

/**
 * More routes, tried before the 404: resolves true when it answered. The embedded ring's /simulator and
 * /console are the only ones; without them every such path is 404 like any unknown path (rules
 * SIM-embedded-only, CONSOLE-page).
 */
export type AdminRoutes = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

export function createAdminHandler(
  checker: Checker,
  metrics: HttpMetrics,
  routes?: AdminRoutes,
): (req: IncomingMessage, res: ServerResponse) => void {
  const sendReport = (res: ServerResponse, report: HealthReport): void => {
    res.writeHead(report.clean ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(report));
  };
  return (req, res) => {
    // Origin-form is a path even when it begins with `//`; a target that is no valid URL must not throw
    // out of the listener, where an uncaught exception ends the process (it matches no route instead).
    const target = req.url ?? '/';
    const text = target.startsWith('/') ? `http://admin${target}` : target;
    const url = URL.canParse(text) ? new URL(text) : undefined;
    const path = url?.pathname ?? target;
    const route = `${req.method} ${path}`;
    const answer = async (): Promise<void> => {
      switch (route) {
        case 'GET /livez':
          // Liveness (rule ADMIN-livez): answered by the event loop alone, never by a backend or the
          // checker, so an orchestrator restarts a wedged process and never one whose database is down.
          return sendReport(res, LIVE);
        case 'GET /healthz':
          return sendReport(res, await checker.health());
        case 'GET /readyz':
          return sendReport(res, await checker.ready());
        case 'GET /metrics':
          res.writeHead(200, { 'content-type': metrics.contentType }).end(await metrics.scrape());
          return;
        default:
          if (url !== undefined && routes !== undefined && (await routes(req, res, url))) return;
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
      }
    };
    answer().catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'internal server error' }));
    });
  };
}
