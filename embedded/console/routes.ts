// /console on the admin listener (rule CONSOLE-page): the page's three plain files, shipped beside this module
// and read once at start-up (no build step, no CDN), and its read-only feed /console/state (rule CONSOLE-feed).
// The page changes things only through the simulator's own routes (simulator-routes.ts).
import { readFileSync } from 'node:fs';
import type { AdminRoutes } from '../../src/transports/http/admin/admin-handler.ts';
import type { ConsoleFeed } from './feed.ts';

const file = (name: string, type: string) => ({ type, body: readFileSync(new URL(`./${name}`, import.meta.url)) });

/** The allow-list: nothing else under /console/ is served. */
const FILES = new Map([
  ['/console/', file('index.html', 'text/html; charset=utf-8')],
  ['/console/page.css', file('page.css', 'text/css; charset=utf-8')],
  ['/console/page.js', file('page.js', 'text/javascript; charset=utf-8')],
]);

/**
 * Files and requests from this listener only; no inline script or style, so the policy needs no hash; nothing
 * else (fonts, frames, forms, other origins), and the page cannot be framed (its buttons take components down).
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const COMMON_HEADERS = { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };

/** Answers whether the path is the console's (true) or not (false: the admin listener's 404). */
export function consoleRoutes(feed: ConsoleFeed): AdminRoutes {
  return async (req, res, { pathname: path, searchParams }) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const answer = (status: number, headers: Record<string, string>, body?: string | Buffer): true => {
      res.writeHead(status, { ...headers, ...COMMON_HEADERS }).end(req.method === 'HEAD' ? undefined : body);
      return true;
    };
    // Relative, so it survives a proxy that mounts the admin listener under a prefix.
    if (path === '/console') return answer(308, { location: 'console/' });
    if (path === '/console/state') {
      // No `after` (Number(null) is 0), a negative one or no count at all: the log from its start.
      const after = Number(searchParams.get('after'));
      const snapshot = await feed.snapshot(Number.isSafeInteger(after) ? Math.max(after, 0) : 0);
      return answer(200, { 'content-type': 'application/json' }, JSON.stringify(snapshot));
    }
    const asset = FILES.get(path);
    return asset !== undefined && answer(200, { 'content-type': asset.type, 'content-security-policy': CONSOLE_CSP }, asset.body);
  };
}
