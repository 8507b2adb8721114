import { EventEmitter, once } from 'node:events';
import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { settled, until } from '../../../../test/support/eventually.ts';
import { closeHttpServer, drainHttp1, SHUTDOWN_IDLE_QUIET_MS, trackConnections } from './shutdown.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * A tracked server whose handler answers `/hold` when its entry in `held` is called (so a request can be
 * held in flight), and a keep-alive agent of one socket for it.
 */
async function heldServer(): Promise<{ server: Server; port: number; held: (() => void)[]; agent: Agent }> {
  const held: (() => void)[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/hold') held.push(() => res.end('held'));
    else res.end('ok');
  });
  trackConnections(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  cleanups.push(
    () => server.closeAllConnections(),
    () => agent.destroy(),
  );
  return { server, port: (server.address() as AddressInfo).port, held, agent };
}

async function get(port: number, path: string, agent: Agent): Promise<{ body: string; connection: string | undefined }> {
  const req = request({ host: '127.0.0.1', port, path, agent });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let body = '';
  for await (const chunk of res) body += String(chunk);
  return { body, connection: res.headers.connection };
}

describe('closeHttpServer (rule LIFE-4-shutdown: no reset on shutdown)', () => {
  it('an in-flight request completes, and its response, written after the stop, says Connection: close', async () => {
    const { server, port, held, agent } = await heldServer();
    expect(await get(port, '/', agent)).toEqual({ body: 'ok', connection: 'keep-alive' });
    const inFlight = get(port, '/hold', agent);
    await until(() => held.length === 1, 'the held request');
    const closed = closeHttpServer(server);
    held[0]!();
    expect(await inFlight).toEqual({ body: 'held', connection: 'close' });
    await closed;
    expect(server.listening).toBe(false);
  });

  it('a request on a kept-alive connection just after the stop is answered with Connection: close, not reset', async () => {
    const { server, port, agent } = await heldServer();
    expect(await get(port, '/', agent)).toEqual({ body: 'ok', connection: 'keep-alive' });
    const closed = closeHttpServer(server);
    // The idle connection is not closed under the client: its next request is served, as the last one.
    expect(await get(port, '/', agent)).toEqual({ body: 'ok', connection: 'close' });
    await closed;
  });

  it('an idle keep-alive connection is closed once quiet, and the close resolves', async () => {
    const { server, port, agent } = await heldServer();
    await get(port, '/', agent);
    const [socket] = Object.values(agent.freeSockets).flat();
    expect(socket).toBeDefined();
    const ended = once(socket!, 'close');
    await closeHttpServer(server);
    await ended;
    expect(server.listening).toBe(false);
  });

  it('gives the server back a closeIdleConnections of its own that it had before the close', async () => {
    const { server } = await heldServer();
    const own = (): void => undefined;
    server.closeIdleConnections = own;
    await closeHttpServer(server);
    expect(server.closeIdleConnections).toBe(own);
  });

  it('a request still in flight past the quiet time is not cut while the grace lasts', async () => {
    const { server, port, held, agent } = await heldServer();
    const inFlight = get(port, '/hold', agent);
    await until(() => held.length === 1, 'the held request');
    const closed = closeHttpServer(server, 5_000);
    // Longer than SHUTDOWN_IDLE_QUIET_MS: a connection is idle by its requests, not by its age.
    await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_IDLE_QUIET_MS + 200));
    held[0]!();
    expect(await inFlight).toEqual({ body: 'held', connection: 'close' });
    await closed;
  });

  it('whatever is still in flight when the grace ends is cut, and the close resolves', async () => {
    const { server, port, held, agent } = await heldServer();
    const inFlight = get(port, '/hold', agent).catch((error: unknown) => error);
    await until(() => held.length === 1, 'the held request');
    // The held request never ends: only the grace can cut it (the instant it does, on a fake clock below).
    await settled(closeHttpServer(server, 100), 'the close, once the grace has cut the held request');
    expect(await inFlight).toBeInstanceOf(Error);
  });

  it('tracking twice is tracking once; a connection taken before tracking is served and left alone', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(
      () => server.closeAllConnections(),
      () => agent.destroy(),
    );
    const port = (server.address() as AddressInfo).port;
    expect(await get(port, '/', agent)).toEqual({ body: 'ok', connection: 'keep-alive' });
    const listeners = (): number[] => [server.listenerCount('connection'), server.listenerCount('request')];
    const before = listeners();
    trackConnections(server);
    trackConnections(server);
    expect(listeners()).toEqual(before.map((count) => count + 1));
    expect(await get(port, '/', agent)).toEqual({ body: 'ok', connection: 'keep-alive' });
  });

  it('refuses to drain a server that was not tracked from its creation', async () => {
    await expect(drainHttp1(createServer())).rejects.toThrow(/trackConnections/);
  });
});

/**
 * drainHttp1's sweep on a fake clock (Date and setTimeout; setImmediate stays real): a stand-in server
 * and sockets, so the exact instant a connection is closed can be checked (rule LIFE-4-shutdown).
 */
describe('drainHttp1 sweep, on a fake clock (rule LIFE-4-shutdown)', () => {
  class FakeSocket extends EventEmitter {
    destroyed = false;
    destroy(): void {
      this.destroyed = true;
      this.emit('close');
    }
  }
  const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  /** Fires the sweep timer due in `ms`, then lets the sweep run (it waits for the poll phase first). */
  const step = async (ms: number): Promise<void> => {
    await vi.advanceTimersByTimeAsync(ms);
    await immediate();
  };

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function tracked(): { server: Server; connect: () => FakeSocket; request: (socket: FakeSocket) => FakeResponse } {
    const server = new EventEmitter() as unknown as Server;
    trackConnections(server);
    return {
      server,
      connect: () => {
        const socket = new FakeSocket();
        server.emit('connection', socket);
        return socket;
      },
      request: (socket) => {
        const res = new FakeResponse();
        server.emit('request', { socket }, res);
        return res;
      },
    };
  }
  class FakeResponse extends EventEmitter {
    headersSent = false;
    shouldKeepAlive = true;
  }

  it('a drain with no connection resolves at once, without waiting a turn of the event loop', async () => {
    const { server } = tracked();
    let drained = false;
    void drainHttp1(server).then(() => (drained = true));
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(drained).toBe(true);
  });

  it('a connection whose requests have all finished is closed exactly when it has been quiet SHUTDOWN_IDLE_QUIET_MS', async () => {
    const { server, connect, request } = tracked();
    const socket = connect();
    const res = request(socket);
    await vi.advanceTimersByTimeAsync(100);
    res.emit('close'); // finished: quiet from now on
    const drained = drainHttp1(server, 5_000);
    await immediate();
    await step(SHUTDOWN_IDLE_QUIET_MS - 50);
    expect(socket.destroyed).toBe(false);
    await step(50);
    expect(socket.destroyed).toBe(true);
    // Resolves as soon as the last connection is gone: no further sweep timer is waited for.
    let done = false;
    void drained.then(() => (done = true));
    await immediate();
    expect(done).toBe(true);
  });

  it('a connection with a request in flight is cut exactly when the grace ends', async () => {
    const { server, connect, request } = tracked();
    const socket = connect();
    request(socket);
    void drainHttp1(server, 100);
    await immediate();
    await step(50);
    expect(socket.destroyed).toBe(false);
    await step(50);
    expect(socket.destroyed).toBe(true);
  });
});
