import { connect, createServer, type IncomingHttpHeaders } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TransportFactory } from '../../src/composition/create-app.ts';
import { HTTP1_SERVER_TIMEOUTS } from '../../src/transports/http/server-timeouts.ts';
import { createKoaApp } from '../../src/transports/koa/koa-app.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';

/** The app mounted the way the gRPC executable mounts it: `app.callback()` behind an h2c server. */
const h2cTransport: TransportFactory = (core) => {
  const server = createServer(createKoaApp(core, { limiter: 'memory' }).callback());
  return { server, shutdown: () => new Promise<void>((resolve) => server.close(() => resolve())), timeouts: HTTP1_SERVER_TIMEOUTS };
};

interface H2Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

function request(baseUrl: string, headers: Record<string, string>, body?: string | Buffer): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const client = connect(baseUrl);
    client.on('error', reject);
    const stream = client.request(headers);
    let received: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (received = h));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      client.close();
      resolve({ status: Number(received[':status']), headers: received, text: Buffer.concat(chunks).toString('utf8') });
    });
    stream.on('error', reject);
    stream.end(body);
  });
}

describe('createKoaApp over HTTP/2 (the gRPC executable REST side)', () => {
  let app: InProcessApp;
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning.message);

  beforeAll(async () => {
    process.on('warning', onWarning);
    app = await startInProcess({ transport: h2cTransport });
    await app.addUser('alice');
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    await app.stop();
  });

  it('answers the same JSON, including a refused oversized body, without HTTP/1-only headers', async () => {
    const login = await request(app.baseUrl, { ':method': 'POST', ':path': '/auth/login', 'content-type': 'application/json' }, JSON.stringify({ username: 'alice', password: 'alice-password' }));
    expect(login.status).toBe(200);
    expect(login.headers['content-type']).toBe('application/json');
    const { token } = JSON.parse(login.text) as { token: string };

    const big = Buffer.alloc(2 * 1024 * 1024, 'a');
    const tooLarge = await request(app.baseUrl, { ':method': 'POST', ':path': '/orders', authorization: `Bearer ${token}`, 'content-length': String(big.length) }, big);
    expect({ status: tooLarge.status, body: JSON.parse(tooLarge.text) as unknown }).toEqual({ status: 413, body: { error: 'request body too large' } });

    const missing = await request(app.baseUrl, { ':method': 'GET', ':path': '/nope' });
    expect({ status: missing.status, body: JSON.parse(missing.text) as unknown }).toEqual({ status: 404, body: { error: 'not found' } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.includes('connection header'))).toEqual([]);
    expect(app.logs.find('request').map((l) => l['status'])).toEqual([200, 413, 404]);
  });
});
