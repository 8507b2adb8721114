import { request, type Agent } from 'node:http';
import { HANG_GUARD_MS } from '../../test/support/eventually.ts';
import type { AdminProbe, RawRequest, Reply } from './driver.ts';

/** Parses a REST answer into a Reply: JSON bodies are parsed, anything else stays text. */
export function restReply(status: number, headers: Record<string, string>, text: string, httpVersion: string): Reply {
  let body: unknown;
  if ((headers['content-type'] ?? '').startsWith('application/json')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { api: 'rest', status, headers, text, httpVersion, body };
}

/** Flattens node's header object (arrays joined) with lower-case names. */
export function flatHeaders(raw: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || name.startsWith(':')) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/**
 * One HTTP/1.1 exchange with node:http, so any header (lowercase `bearer`, a spoofed content type) can be
 * sent as is. `agent` false: a connection per request.
 */
export function http1Send(baseUrl: string, agent: Agent | false): (raw: RawRequest) => Promise<Reply> {
  return (raw) => http1Exchange(baseUrl, agent, raw, true);
}

function http1Exchange(baseUrl: string, agent: Agent | false, raw: RawRequest, mayRetry: boolean): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = raw.body === undefined ? undefined : Buffer.isBuffer(raw.body) ? raw.body : Buffer.from(raw.body, 'utf8');
    const headers: Record<string, string> = { ...raw.headers };
    if (body !== undefined && headers['content-length'] === undefined) headers['content-length'] = String(body.length);
    let settled = false;
    let answered = false;
    const req = request(
      new URL(raw.path, baseUrl),
      // A separate socket for a chosen source address: pooled sockets carry their own.
      { method: raw.method, headers, agent: raw.localAddress === undefined ? agent : false, localAddress: raw.localAddress },
      (res) => {
        answered = true;
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
    req.setTimeout(HANG_GUARD_MS, () => req.destroy(new Error(`${raw.method} ${raw.path}: no answer (a hang)`)));
    // A server may answer (413) and close before the whole body is written: the answer counts. Through
    // a relay (Docker's port proxy) the answer can reach the client well after its write failed.
    req.on('error', (error: NodeJS.ErrnoException) => {
      // Node's documented keep-alive race: a pooled socket the server closed as idle just as it was
      // reused resets before any answer came. It is sent again, once, on another socket.
      if (mayRetry && req.reusedSocket && error.code === 'ECONNRESET' && !answered) {
        settled = true;
        return void http1Exchange(baseUrl, agent, raw, false).then(resolve, reject);
      }
      // Else an answer already on its way still counts: what the socket read before it closed is parsed by then.
      if (settled) return;
      const giveUp = (): void => void setImmediate(() => (settled || answered ? undefined : reject(error)));
      if (req.socket === null || req.socket.closed) giveUp();
      else req.socket.once('close', giveUp);
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** GET on the admin listener over HTTP/1.1 (spec 4.2), one connection per probe. */
export function adminProbe(adminUrl: string): AdminProbe {
  const send = http1Send(adminUrl, false);
  const get = (path: string): Promise<Reply> => send({ method: 'GET', path });
  return { get, livez: () => get('/livez'), healthz: () => get('/healthz'), readyz: () => get('/readyz'), metrics: () => get('/metrics') };
}
