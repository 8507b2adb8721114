/**
 * The admin listener's routes (spec 4.2), on the Checker interface so every executable serves them alike.
 * For the cluster network only: it names components.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Checker, HealthReport } from '../../../lifecycle/checker.ts';
import type { HttpMetrics } from '../../../observability/metrics.ts';

/**
 * More routes, tried before the 404; true when one answered. Only the embedded ring's /simulator and
 * /console (rules SIM-embedded-only, CONSOLE-page).
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
    // As stdlib/server.ts: origin-form is a path even after `//`; a target that is no URL matches no route, never throws.
    const target = req.url ?? '/';
    const url = URL.parse(target.startsWith('/') ? `http://admin${target}` : target) ?? undefined;
    const route = `${req.method} ${url?.pathname ?? target}`;
    const answer = async (): Promise<void> => {
      switch (route) {
        case 'GET /livez':
          // Rule ADMIN-livez: the event loop alone answers, so a wedged process is restarted, never one whose database is down.
          return sendReport(res, { clean: true, nodes: null });
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
