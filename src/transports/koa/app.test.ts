import { Agent, request } from 'node:http';
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { startInProcess, type InProcessApp } from '../../../test/support/in-process-app.ts';
import { HANG_GUARD_MS } from '../../../test/support/eventually.ts';
import { stdlibTransport } from '../stdlib/server.ts';
import { koaTransport } from './app.ts';

interface Answer {
  readonly status: number | undefined;
  readonly allow: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string;
}

function send(port: number, method: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, allow: res.headers.allow, contentType: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * What no route serves, answered by middleware.ts unrouted: methods the conformance cases do not send
 * (OPTIONS, which router.allowedMethods() would answer 200, and verbs it would call 501). orders-koa must
 * answer them as orders-stdlib does (rules HTTP-405-method, HTTP-404-unknown).
 */
describe('orders-koa answers unmatched requests as orders-stdlib does', () => {
  let koa: InProcessApp;
  let stdlib: InProcessApp;
  beforeAll(async () => {
    [koa, stdlib] = await Promise.all([startInProcess({ transport: koaTransport }), startInProcess({ transport: stdlibTransport })]);
  });
  afterAll(async () => {
    await Promise.all([koa.stop(), stdlib.stop()]);
  });

  test.each([
    ['OPTIONS', '/orders', 405],
    ['OPTIONS', '/no-such-route', 404],
    ['PROPFIND', '/auth/login', 405],
    ['PROPFIND', '/no-such-route', 404],
    ['DELETE', '/orders', 405],
  ])('%s %s: %i, as orders-stdlib', async (method, path, status) => {
    const [fromKoa, fromStdlib] = await Promise.all([send(koa.port, method, path), send(stdlib.port, method, path)]);
    expect(fromKoa.status).toBe(status);
    expect(fromKoa).toEqual(fromStdlib);
    if (status === 405) expect(fromKoa.allow).toMatch(/^(POST|GET)/);
  });
});

function getOpenapi(port: number, agent: Agent): Promise<{ status: number | undefined; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/openapi.yaml', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('[LIFE-4-shutdown] the HTTP/1.1 transports stop without resetting a kept-alive client', () => {
  test.each([
    ['orders-stdlib', stdlibTransport],
    ['orders-koa', koaTransport],
  ])(
    '%s: the next request on a kept-alive connection after the stop is answered with Connection: close, and the listener closes',
    async (_name, transport) => {
      const app = await startInProcess({ transport });
      const agent = new Agent({ keepAlive: true });
      try {
        expect(await getOpenapi(app.port, agent)).toEqual({ status: 200, connection: 'keep-alive' });
        const stopped = app.app.transport.shutdown();
        expect(await getOpenapi(app.port, agent)).toEqual({ status: 200, connection: 'close' });
        await stopped;
        expect(app.app.transport.server.listening).toBe(false);
      } finally {
        agent.destroy();
        await app.stop();
      }
    },
  );
});

describe('[CHAIN-R4-framework-logger] Koa prints nothing of its own', () => {
  test("a client that resets its connection mid-request: the request line (499), and nothing from Koa's own error printing", async () => {
    const koa = await startInProcess({ transport: koaTransport });
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const arrived = once(koa.app.transport.server, 'request');
      const socket = connect({ host: '127.0.0.1', port: koa.port });
      // A login whose body is still on its way: the handler is reading it when the client resets, and the
      // socket's ECONNRESET reaches Koa's app.onerror (through ctx.onerror), which prints unless silent.
      socket.write('POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user');
      await arrived;
      await new Promise((resolve) => setImmediate(resolve));
      socket.resetAndDestroy();
      await vi.waitFor(() => expect(koa.logs.find('request').map((line) => line['status'])).toStrictEqual([499]), {
        timeout: HANG_GUARD_MS,
        interval: 5,
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
      await koa.stop();
    }
  });
});
