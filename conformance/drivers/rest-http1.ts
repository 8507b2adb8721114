import { Agent, request } from 'node:http';
import type { Driver, DriverOptions, RawRequest, Reply } from './driver.ts';
import { restDriver } from './rest-operations.ts';
import { flatHeaders, restReply } from './rest-reply.ts';

const TIMEOUT_MS = 10_000;

/** REST over HTTP/1.1 with node:http, so any header (lowercase `bearer`, a spoofed content type) can be sent as is. */
export function restHttp1Driver(options: DriverOptions): Driver {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const send = (raw: RawRequest): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const body = raw.body === undefined ? undefined : Buffer.isBuffer(raw.body) ? raw.body : Buffer.from(raw.body, 'utf8');
      const headers: Record<string, string> = { ...raw.headers };
      if (body !== undefined && headers['content-length'] === undefined) headers['content-length'] = String(body.length);
      let settled = false;
      const req = request(
        new URL(raw.path, options.baseUrl),
        // A separate socket for a chosen source address: pooled sockets carry their own.
        { method: raw.method, headers, agent: raw.localAddress === undefined ? agent : false, localAddress: raw.localAddress },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            settled = true;
            resolve(restReply(res.statusCode ?? 0, flatHeaders(res.headers), Buffer.concat(chunks).toString('utf8'), res.httpVersion));
          });
          res.on('error', (error) => {
            if (!settled) reject(error);
          });
        },
      );
      req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`${raw.method} ${raw.path}: timed out`)));
      // A server may answer (413) and close before the whole body is written: the answer counts.
      req.on('error', (error) => {
        if (!settled) setTimeout(() => (settled ? undefined : reject(error)), 50);
      });
      if (body !== undefined) req.write(body);
      req.end();
    });
  return restDriver('rest-http1', send, options, async () => {
    agent.destroy();
  });
}
