// /console on the admin listener: the page's three files and its read-only feed (rule CONSOLE-page).
import { readFileSync } from 'node:fs';
import type { AdminRoutes } from '../../src/transports/http/admin/admin-handler.ts';
import type { ConsoleFeed } from './feed.ts';

/**
 * The embedded console page (rule CONSOLE-page) on the admin listener: three plain files shipped
 * beside this module (no build step, no CDN) and one read-only JSON feed. Every change the
 * page makes goes through the simulator's own routes (PUT /simulator/components/{name}, POST
 * /simulator/clock/advance, POST /simulator/reset); it reads GET /simulator and GET /healthz as they are.
 */
interface Asset {
  readonly contentType: string;
  readonly body: Buffer;
}

function asset(name: string, contentType: string): Asset {
  return { contentType, body: readFileSync(new URL(`./${name}`, import.meta.url)) };
}

/** The allow-list: path under the admin listener → file. Read once at start-up. */
const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ['/console/', asset('index.html', 'text/html; charset=utf-8')],
  ['/console/page.css', asset('page.css', 'text/css; charset=utf-8')],
  ['/console/page.js', asset('page.js', 'text/javascript; charset=utf-8')],
]);

/**
 * Rule CONSOLE-page: files and requests from this listener only; no inline script or style, so the
 * policy needs no hash; nothing else (fonts, frames, forms, other origins) is allowed, and the page
 * cannot be framed (its buttons take components down).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const COMMON_HEADERS = { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' } as const;

/** Answers whether the path is the console's (true) or not (false: the admin listener's 404). */
export function consoleRoutes(feed: ConsoleFeed): AdminRoutes {
  return async (req, res, { pathname: path, searchParams }) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (path === '/console') {
      // Relative, so it survives a proxy that mounts the admin listener under a prefix.
      res.writeHead(308, { location: 'console/', ...COMMON_HEADERS }).end();
      return true;
    }
    if (path === '/console/state') {
      // No `after` (Number(null) is 0), a negative one or no count at all: the log from its start.
      const after = Number(searchParams.get('after'));
      const snapshot = await feed.snapshot(Number.isSafeInteger(after) ? Math.max(after, 0) : 0);
      res
        .writeHead(200, { 'content-type': 'application/json', ...COMMON_HEADERS })
        .end(req.method === 'HEAD' ? undefined : JSON.stringify(snapshot));
      return true;
    }
    const file = ASSETS.get(path);
    if (file === undefined) return false;
    res.writeHead(200, { 'content-type': file.contentType, 'content-security-policy': CONSOLE_CSP, ...COMMON_HEADERS });
    res.end(req.method === 'HEAD' ? undefined : file.body);
    return true;
  };
}
