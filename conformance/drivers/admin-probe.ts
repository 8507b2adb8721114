import { request } from 'node:http';
import type { AdminProbe, Reply } from './driver.ts';
import { flatHeaders, restReply } from './rest-reply.ts';

/** GET on the admin listener over HTTP/1.1 (spec 4.2), one connection per probe. */
export function adminProbe(adminUrl: string): AdminProbe {
  const get = (path: string): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const req = request(new URL(path, adminUrl), { method: 'GET', agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(restReply(res.statusCode ?? 0, flatHeaders(res.headers), Buffer.concat(chunks).toString('utf8'), res.httpVersion)));
        res.on('error', reject);
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`admin GET ${path}: timed out`)));
      req.on('error', reject);
      req.end();
    });
  return { get, livez: () => get('/livez'), healthz: () => get('/healthz'), readyz: () => get('/readyz'), metrics: () => get('/metrics') };
}
