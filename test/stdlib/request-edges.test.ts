import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawHttp1 } from '../../conformance/cases/raw-http1.ts';
import { stdlibTransport } from '../../src/transports/stdlib/server.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';

// Edge cases of the standard-library transport that conformance's cases do not send: hand-written
// request targets, a chunked body without Content-Length, a cache bug that is not a panic.

/** Sends a hand-written request line (conformance's raw HTTP/1.1 writer) and returns the answer's status. */
const statusOf = async (port: number, requestLine: string): Promise<number> =>
  (await rawHttp1(`http://127.0.0.1:${port}`, `${requestLine}\r\nhost: x\r\nconnection: close\r\n\r\n`)).reply.status ?? 0;

/** A chunked upload of `chunks` (no Content-Length); errors after the answer (EPIPE while uploading) are ignored. */
function chunked(url: string, token: string, chunks: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const client = request(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } });
    client.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }));
    });
    client.on('error', (error) => answered || reject(error));
    (async () => {
      for (const chunk of chunks) {
        if (answered || client.destroyed) break;
        if (!client.write(chunk)) await new Promise((r) => client.once('drain', r).once('close', r));
      }
      client.end();
    })().catch(() => undefined);
  });
}

describe('node:http transport edge cases', () => {
  let app: InProcessApp;
  let token: string;

  beforeAll(async () => {
    app = await startInProcess({ transport: stdlibTransport });
    token = await app.login('alice');
  });
  afterAll(() => app.stop());

  it('a request target that is no valid URL is a 404 on both listeners, and the process survives', async () => {
    for (const port of [app.port, app.adminPort]) {
      expect(await statusOf(port, 'GET http://[ HTTP/1.1')).toBe(404);
      expect(await statusOf(port, 'GET http://a:99999/ HTTP/1.1')).toBe(404);
    }
    expect((await fetch(`${app.baseUrl}/nope`)).status).toBe(404);
  });

  it('an origin-form target starting with // is a path, not a host', async () => {
    expect(await statusOf(app.port, 'GET //evil.example/orders HTTP/1.1')).toBe(404);
    expect(await statusOf(app.adminPort, 'GET //x/healthz HTTP/1.1')).toBe(404);
  });

  it('a chunked 2 MiB body (no Content-Length) is refused 413 on a protected route', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const response = await chunked(
      `${app.baseUrl}/orders`,
      token,
      Array.from({ length: 32 }, () => chunk),
    );
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toStrictEqual({ error: 'request body too large' });
  });

  it('a plain TypeError thrown by the cache is not a panic: the read degrades to the repository', async () => {
    const created = await fetch(`${app.baseUrl}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ item: 'widget', quantity: 2 }),
    });
    const { id } = (await created.json()) as { id: string };
    const cache = app.fakes!.cacheFake;
    const originalGet = cache.get.bind(cache);
    cache.get = async () => {
      throw new TypeError('cache client bug');
    };
    try {
      expect((await fetch(`${app.baseUrl}/orders/${id}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      expect(app.logs.find('api: panic recovered')).toEqual([]);
    } finally {
      cache.get = originalGet;
    }
  });
});
