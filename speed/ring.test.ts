import { get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LogCapture } from '../test/support/log-capture.ts';
import type { Backends } from '../src/composition/backends.ts';
import { createApp } from '../src/composition/create-app.ts';
import { createEmbeddedBackends } from '../embedded/backends.ts';
import { loadServiceConfig } from '../src/config/service-config.ts';
import { sessionKeyFromVerifiedSubject } from '../src/domain/session-key.ts';
import { createLogger } from '../src/observability/logger.ts';
import { TokenService } from '../src/service/token-service.ts';
import { stdlibTransport } from '../src/transports/stdlib/stdlib-transport.ts';
import { RememberedTokens } from './remembered-tokens.ts';
import { speedRing } from './ring.ts';
import { UnexportedTracer } from './unexported-tracer.ts';

const PRINCIPAL = {
  userId: 'user-1',
  claims: { sub: 'user-1', name: 'u', iat: 0, exp: 0 },
  sessionKey: sessionKeyFromVerifiedSubject('user-1'),
};

/** createApp on the embedded backends, with the ring or without, on a clock the test moves. */
async function build(ring: typeof speedRing | undefined, clock: { ms: number }, change: (b: Backends) => Backends = (b) => b) {
  const logger = createLogger('debug', new LogCapture());
  const config = loadServiceConfig({ HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0' }, { embedded: true });
  const backends = change(await createEmbeddedBackends(logger, { seedDemoUsers: false }));
  const app = createApp({
    config,
    logger,
    backends,
    transport: stdlibTransport,
    serviceName: 'orders-test',
    clock: { now: () => new Date(clock.ms) },
    speed: ring,
  });
  return { app, backends };
}

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

/** For each response of the app's public server: whether it was written (writableEnded) when end() returned. */
async function writtenAtEnd(app: Awaited<ReturnType<typeof build>>['app']): Promise<boolean[]> {
  server = app.transport.server as Server;
  const seen: boolean[] = [];
  server.prependListener('request', (_req, res) => {
    const end = res.end.bind(res) as (...args: unknown[]) => unknown;
    res.end = ((...args: unknown[]) => {
      end(...args);
      seen.push(res.writableEnded);
      return res;
    }) as typeof res.end;
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) =>
    get(`http://127.0.0.1:${port}/nope`, (res) => res.resume().on('end', resolve)).on('error', reject),
  );
  return seen;
}

describe('the speed ring through createApp (its `speed` option)', () => {
  it('[CHAIN-turn-end-writes] with the ring the public HTTP/1.1 server writes a response after the turn its handler ended it in', async () => {
    expect(await writtenAtEnd((await build(speedRing, { ms: 0 })).app)).toEqual([false]);
  });

  it('[TRACE-no-exporter-work] with the ring and nothing to export to, spans are valid and nothing is recorded', async () => {
    const { app } = await build(speedRing, { ms: 0 });
    expect(app.core.tracer).toBeInstanceOf(UnexportedTracer);
    const span = app.core.tracer.startSpan('x');
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
  });

  it('[AUTH-1-hs256] with the ring tokens are remembered on the service clock, and refused from their exp on', async () => {
    const clock = { ms: Date.parse('2030-01-01T00:00:00Z') };
    const { app } = await build(speedRing, clock);
    expect(app.core.tokens).toBeInstanceOf(RememberedTokens);
    const token = await app.core.tokens.issue('user-1', 'u');
    expect((await app.core.tokens.verify(token)).sub).toBe('user-1');
    clock.ms += 3_600_000; // JWT_EXPIRY's default: the token's exp
    await expect(app.core.tokens.verify(token)).rejects.toThrow('invalid or expired token');
    expect(Object.getPrototypeOf((await build(undefined, clock)).app.core.tokens)).toBe(TokenService.prototype);
  });

  it('[SVC-near-cache] with the ring the near tier answers repeated reads and lapses on the service clock: 30 s later a read goes to the shared cache again', async () => {
    const clock = { ms: Date.parse('2030-01-01T00:00:00Z') };
    const sharedGets: string[] = [];
    const { app } = await build(speedRing, clock, (b) => ({
      ...b,
      cache: { get: (id: string) => (sharedGets.push(id), b.cache.get(id)), set: (order) => b.cache.set(order) },
    }));
    const ctx = { principal: PRINCIPAL, signal: new AbortController().signal };
    const order = await app.core.orders.create(ctx, 'near', 1);
    await app.core.orders.get(ctx, order.id);
    expect(sharedGets).toEqual([]); // remembered by the near tier at create
    clock.ms += 31_000;
    await app.core.orders.get(ctx, order.id);
    expect(sharedGets).toEqual([order.id]);
  });
});
