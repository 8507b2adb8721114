// The Listener lives in src/transports/http/server/listener.ts; its readiness machine is spec 3.3 and it is
// driven by the lifecycle runner, so its tests sit with the lifecycle's.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../test/support/eventually.ts';
import { closeHttpServer, trackConnections } from '../transports/http/server/shutdown.ts';
import { Listener } from '../transports/http/server/listener.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An HTTP server answering `done`, closed after the test. */
function doneServer(): Server {
  const server = createServer((_req, res) => res.end('done'));
  trackConnections(server);
  cleanups.push(async () => {
    server.closeAllConnections();
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  });
  return server;
}

function listenerOn(server: Server, port = 0, name = 'api', shutdown = () => closeHttpServer(server, 2_000)): Listener {
  return new Listener({ name, server, address: { host: '127.0.0.1', port }, shutdown });
}

describe('Listener readiness (spec 3.3)', () => {
  // Not ready before the bind (READY-not-yet), ready once bound (READY-bound), still bound and answering
  // after Run returns on cancel until Stop (READY-cancel): the not-ready-before-bind,
  // readyz-ready-once-bound and lifecycle-order-and-shutdown conformance cases, over the real listeners.
  it.each(['api', 'admin'])(
    'a failed bind (port in use) makes run reject with `%s: listen: …` (the component name) and it stays not ready',
    async (name) => {
      const occupier = createTcpServer();
      occupier.listen(0, '127.0.0.1');
      await once(occupier, 'listening');
      cleanups.push(() => new Promise((resolve) => occupier.close(() => resolve())));
      const busyPort = (occupier.address() as AddressInfo).port;

      const listener = listenerOn(doneServer(), busyPort, name);
      const failure = await listener.run(new AbortController().signal).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toMatch(new RegExp(`^${name}: listen: `));
      expect((failure as Error).message).toContain('EADDRINUSE');
      // The bind error itself stays reachable (its code, for whoever logs or tells failures apart).
      const cause = (failure as Error).cause as NodeJS.ErrnoException;
      expect(cause.code).toBe('EADDRINUSE');
      expect((failure as Error).message).toBe(`${name}: listen: ${cause.message}`);
      expect(() => listener.port()).toThrow(`${name}: not accepting connections yet`);
      await expect(listener.ready()).rejects.toThrow(`${name}: not accepting connections yet`);
      // Stop after a failed bind is harmless.
      await expect(listener.stop()).resolves.toBeUndefined();
    },
  );

  it('[LIMIT-connections] run gives the server its connection cap when one is set, and leaves it alone otherwise', async () => {
    const capped = doneServer();
    const listener = new Listener({
      name: 'api',
      server: capped,
      address: { host: '127.0.0.1', port: 0 },
      shutdown: async () => undefined,
      maxConnections: 7,
    });
    await listener.run(AbortSignal.abort());
    expect(capped.maxConnections).toBe(7);
    // No cap set: a cap the server already carries stays.
    const own = doneServer();
    own.maxConnections = 3;
    await listenerOn(own).run(AbortSignal.abort());
    expect(own.maxConnections).toBe(3);
  });

  it('[READY-cancel] run, once bound, returns only when its signal is cancelled', async () => {
    const listener = listenerOn(doneServer());
    const controller = new AbortController();
    let returned = false;
    const running = listener.run(controller.signal).then(() => (returned = true));
    await until(
      () =>
        listener.ready().then(
          () => true,
          () => false,
        ),
      'the bind',
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(returned).toBe(false);
    controller.abort();
    await running;
    expect(returned).toBe(true);
    await listener.stop();
  });

  it('run with an already cancelled signal binds and returns at once; stop hands the graceful close to the transport shutdown (HTTP/2 sessions, keep-alive), once, and only when bound', async () => {
    const server = doneServer();
    let shutdowns = 0;
    const listener = listenerOn(server, 0, 'api', async () => {
      shutdowns += 1;
      await closeHttpServer(server);
    });
    await listener.stop();
    expect(shutdowns).toBe(0);
    await expect(listener.run(AbortSignal.abort())).resolves.toBeUndefined();
    await expect(listener.ready()).resolves.toBeUndefined();
    await listener.stop();
    expect(shutdowns).toBe(1);
    expect(server.listening).toBe(false);
    // Ready until Stop, not after (spec 3.3).
    await expect(listener.ready()).rejects.toThrow('api: not accepting connections yet');
    await listener.stop();
    expect(shutdowns).toBe(1);
  });
});
