import { once } from 'node:events';
import { Agent, get, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { until } from '../../test/support/eventually.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { loadServiceConfig, type ServiceConfig } from '../config/service.ts';
import { sessionKeyFromVerifiedSubject } from '../domain/session-key.ts';
import { runComponents } from '../lifecycle/runner.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import { stdlibTransport } from '../transports/stdlib/server.ts';
import type { Component } from '../lifecycle/component.ts';
import { bucketDecision, type RateLimitStore } from '../rate-limit/store.ts';
import type { Backends, SharedRateLimitFactory } from './backends.ts';
import { createApp, type App, type AppOptions } from './create-app.ts';
import { createEmbeddedBackends } from '../../embedded/backends.ts';
import type { OutboxRelayOptions } from '../service/outbox-relay.ts';

async function build(relayOptions?: OutboxRelayOptions) {
  const logs = new LogCapture();
  const logger = createLogger('debug', logs);
  const config = loadServiceConfig({ HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0' }, { embedded: true });
  const backends = await createEmbeddedBackends(logger, { seedDemoUsers: false });
  const app = createApp({ config, logger, backends, transport: stdlibTransport, serviceName: 'orders-test', relayOptions });
  return { app, logs, logger, backends };
}

const PRINCIPAL = {
  userId: 'user-1',
  claims: { sub: 'user-1', name: 'u', iat: 0, exp: 0 },
  sessionKey: sessionKeyFromVerifiedSubject('user-1'),
};

/** Runs every component of the app and resolves once it is ready; abort `controller` to stop it. */
async function run({ app, logger }: { app: App; logger: Logger }): Promise<{ controller: AbortController; running: Promise<void> }> {
  const controller = new AbortController();
  const running = runComponents(app.components, controller.signal, logger);
  await until(async () => (await app.checker.ready()).clean, 'the app to be ready');
  return { controller, running };
}

describe('createApp composition (spec 3.4 rule 1, 3.2 rule 5, 2.3)', () => {
  it('orders components by dependency: tracer first, backends, sessions, notifier, relay, then the listeners', async () => {
    const { app } = await build();
    // Stop runs in reverse: listeners close (in-flight requests finish), then the relay flushes the
    // outbox, then the notifier drains what it published (rule EVT-4-notifier-stop), then sessions flush, and the
    // backends and the tracer go away last.
    expect(app.components.map((c) => c.name)).toEqual([
      'tracer',
      'database',
      'cache',
      'publisher',
      'sessions',
      'notifier',
      'relay',
      'api',
      'admin',
    ]);
  });

  it('stop order (rules LIFE-4-shutdown, EVT-4-notifier-stop): what the API created just before the stop is published by the relay flush and announced by the notifier drain', async () => {
    // The relay's loop sleeps through the test, so only its stop-time flush can publish.
    const built = await build({ pollMs: 60_000 });
    const { app, logs, backends } = built;
    let rounds = 0;
    const relayPending = backends.store.relayPending.bind(backends.store);
    backends.store.relayPending = async (...args) => relayPending(...args).finally(() => (rounds += 1));
    const { controller, running } = await run(built);
    await until(() => rounds > 0, "the relay's first (empty) round");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await app.core.orders.create({ principal: PRINCIPAL, signal: controller.signal }, `last-${i}`, 1)).id);
    expect(logs.find('order placed')).toHaveLength(0);
    controller.abort();
    await running;
    expect(logs.find('order placed').map((l) => l['order_id'])).toEqual(ids);
    expect(backends.store.pendingEvents()).toHaveLength(0);
  });

  it("the publisher's health node reports the outbox backlog past the relay's threshold", async () => {
    const built = await build({ unhealthyPending: 2, sampleMs: 5 });
    const { app, backends } = built;
    const { controller, running } = await run(built);
    backends.bus.trouble.failNext(10_000); // the broker refuses every publish but still answers health
    for (let i = 0; i < 2; i++) await app.core.orders.create({ principal: PRINCIPAL, signal: controller.signal }, `stuck-${i}`, 1);
    let publisher: { name: string; status: string; error?: string } | undefined;
    await until(async () => {
      publisher = (await app.checker.health()).nodes?.find((n) => n.name === 'publisher');
      return publisher?.status !== 'ok';
    }, 'the publisher node to report the backlog');
    expect(publisher).toMatchObject({ name: 'publisher', status: 'unavailable' });
    expect(publisher?.error).toMatch(/^publisher: outbox backlog: 2 events pending/);
    // The backlog is the publisher's failure alone: the database and the cache stay healthy.
    expect((await app.checker.health()).nodes?.map((n) => [n.name, n.status])).toEqual([
      ['database', 'ok'],
      ['cache', 'ok'],
      ['publisher', 'unavailable'],
    ]);
    controller.abort();
    await running;
  });
});

/** Builds an app from the embedded backends, with `change` applied to them and `extra` to the options. */
async function buildWith(
  change: (backends: Backends) => Backends,
  extra: Partial<Omit<AppOptions, 'config' | 'logger' | 'backends' | 'transport' | 'serviceName'>> & {
    env?: Record<string, string>;
    config?: (config: ServiceConfig) => ServiceConfig;
  } = {},
) {
  const logs = new LogCapture();
  const logger = createLogger('debug', logs);
  const { env, config: tweak = (c) => c, ...options } = extra;
  const config = tweak(loadServiceConfig({ HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', ...env }, { embedded: true }));
  const backends = change(await createEmbeddedBackends(logger, { seedDemoUsers: false }));
  return {
    app: createApp({ config, logger, backends, transport: stdlibTransport, serviceName: 'orders-test', ...options }),
    logs,
    logger,
    backends,
  };
}

/** A shared rate-limit store that records the keys it is asked about and allows while `allow` says so. */
function sharedStore(allow: () => boolean) {
  const buckets: Array<{ rate: number; burst: number }> = [];
  const keys: string[] = [];
  const store: RateLimitStore & Component = {
    name: 'rate-limit-store',
    take: (key) => {
      keys.push(key);
      return bucketDecision(allow(), allow() ? 4 : 0, 5, 5, 0);
    },
  };
  const factory: SharedRateLimitFactory = (bucket) => {
    buckets.push({ ...bucket });
    return store;
  };
  return { factory, buckets, keys };
}

describe('createApp wiring of the rate-limit store, the clock, the tracer and the publisher', () => {
  it('[LIMIT-rate-store] RATE_LIMIT_STORE=redis: the shared store is built with the RATE_LIMIT_RPS bucket, connects before the API listener and decides REST requests', async () => {
    const shared = sharedStore(() => false);
    // loadServiceConfig refuses redis with --embedded; the app itself takes any backends that bring a store.
    const built = await buildWith((b) => ({ ...b, sharedRateLimit: shared.factory }), {
      env: { RATE_LIMIT_RPS: '5' },
      config: (c) => ({ ...c, rateLimitStore: 'redis' }),
    });
    const { app } = built;
    expect(shared.buckets).toEqual([{ rate: 5, burst: 5 }]);
    const names = app.components.map((c) => c.name);
    expect(names.indexOf('rate-limit-store')).toBeGreaterThan(names.indexOf('relay'));
    expect(names.indexOf('rate-limit-store')).toBeLessThan(names.indexOf('api'));
    const { controller, running } = await run(built);
    try {
      const response = await fetch(`http://127.0.0.1:${app.api.port()}/orders/x`);
      expect(response.status).toBe(429); // the shared store refused; the process's own bucket was full
      expect(shared.keys).toHaveLength(1);
    } finally {
      controller.abort();
      await running;
    }
  });

  it('[LIMIT-rate-store] RATE_LIMIT_STORE=memory: a shared store the backends offer is never built; the process bucket decides', async () => {
    const shared = sharedStore(() => false);
    const built = await buildWith((b) => ({ ...b, sharedRateLimit: shared.factory }));
    expect(shared.buckets).toEqual([]);
    expect(built.app.components.map((c) => c.name)).not.toContain('rate-limit-store');
    const { controller, running } = await run(built);
    try {
      const response = await fetch(`http://127.0.0.1:${built.app.api.port()}/orders/x`);
      expect(response.status).not.toBe(429);
      expect(shared.keys).toEqual([]);
    } finally {
      controller.abort();
      await running;
    }
  });

  it('[LIMIT-rate-store] RATE_LIMIT_STORE=redis with backends that have no shared store fails construction', async () => {
    await expect(buildWith((b) => b, { config: (c) => ({ ...c, rateLimitStore: 'redis' }) })).rejects.toThrow(
      new Error('RATE_LIMIT_STORE=redis: these backends have no shared store'),
    );
  });

  it('[AUTH-1-hs256] tokens are stamped by the service clock when one is given, by the system time otherwise', async () => {
    const pinned = new Date('2030-01-01T00:00:00Z');
    const withClock = await buildWith((b) => b, { clock: { now: () => pinned } });
    const iat = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iat: number }).iat;
    expect(iat(await withClock.app.core.tokens.issue('user-1', 'u'))).toBe(pinned.getTime() / 1000);
    const without = await buildWith((b) => b);
    const token = await without.app.core.tokens.issue('user-1', 'u');
    expect((await without.app.core.tokens.verify(token)).sub).toBe('user-1');
  });

  it('[SVC-cache-aside, SVC-near-cache] without the speed ring there is no near tier: every fetch reads the shared cache, and a create writes it', async () => {
    const sharedGets: string[] = [];
    const sharedSets: string[] = [];
    const built = await buildWith((b) => ({
      ...b,
      cache: {
        get: (id: string) => (sharedGets.push(id), b.cache.get(id)),
        set: (order) => (sharedSets.push(order.id), b.cache.set(order)),
      },
    }));
    const ctx = { principal: PRINCIPAL, signal: new AbortController().signal };
    const order = await built.app.core.orders.create(ctx, 'plain', 1);
    expect(sharedSets).toEqual([order.id]);
    await built.app.core.orders.get(ctx, order.id);
    await built.app.core.orders.get(ctx, order.id);
    expect(sharedGets).toEqual([order.id, order.id]);
  });

  it('[CHAIN-turn-end-writes] without the speed ring a response is written when the handler ends it', async () => {
    const { app } = await buildWith((b) => b);
    const server = app.transport.server as HttpServer;
    const endedAtEnd: boolean[] = [];
    server.prependListener('request', (_req, res) => {
      const end = res.end.bind(res) as (...args: unknown[]) => unknown;
      res.end = ((...args: unknown[]) => {
        end(...args);
        endedAtEnd.push(res.writableEnded);
        return res;
      }) as typeof res.end;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve, reject) =>
        get(`http://127.0.0.1:${port}/nope`, (res) => res.resume().on('end', resolve)).on('error', reject),
      );
    } finally {
      server.close();
    }
    expect(endedAtEnd).toEqual([true]);
  });

  it('[TRACE-no-endpoint] without the speed ring, no span processors and no OTLP endpoint, spans come from the SDK, valid and sampled', async () => {
    const { app } = await buildWith((b) => b);
    const span = app.core.tracer.startSpan('x');
    expect(span.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span.spanContext().traceFlags & 1).toBe(1);
    expect(span.isRecording()).toBe(true);
    span.end();
  });

  it("[EVT-7-delivery] the publisher's component keeps its own init, run, stop and ready, and a publisher without health is healthy", async () => {
    const calls: string[] = [];
    const publisher: Component = {
      name: 'publisher',
      init: async () => void calls.push('init'),
      run: async (signal) => void calls.push(`run:${signal.aborted}`),
      stop: async () => void calls.push('stop'),
      ready: async () => void calls.push('ready'),
    };
    const { app } = await buildWith((b) => ({ ...b, components: b.components.map((c) => (c.name === 'publisher' ? publisher : c)) }));
    const wrapped = app.components.find((c) => c.name === 'publisher')!;
    await wrapped.init!();
    await wrapped.run!(AbortSignal.abort());
    await wrapped.stop!();
    await wrapped.ready!();
    await expect(wrapped.health!()).resolves.toBeUndefined();
    expect(calls).toEqual(['init', 'run:true', 'stop', 'ready']);
  });
});

describe('createApp wiring of the admin listener', () => {
  it('[METRICS-service] the admin scrape shows the service metrics: sessions by state and the process metrics', async () => {
    const built = await build();
    const { controller, running } = await run(built);
    try {
      const scrape = await (await fetch(`http://127.0.0.1:${built.app.admin.port()}/metrics`)).text();
      expect(scrape).toMatch(/^orders_sessions\{state="live"\} 0$/m);
      expect(scrape).toMatch(/^orders_sessions\{state="lingering"\} 0$/m);
      expect(scrape).toMatch(/^process_cpu_user_seconds_total \d/m);
    } finally {
      controller.abort();
      await running;
    }
  });

  it('[LIFE-4-shutdown] a stop closes both listeners, every component stops without a failure, and an idle admin keep-alive connection is closed', async () => {
    const built = await build();
    const { app, logs } = built;
    const { controller, running } = await run(built);
    const agent = new Agent({ keepAlive: true });
    try {
      // One answered request, its connection kept open by the client.
      const socket = await new Promise<Socket>((resolve, reject) => {
        const req = get({ host: '127.0.0.1', port: app.admin.port(), path: '/livez', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(req.socket as Socket));
        });
        req.on('error', reject);
      });
      expect(socket.destroyed).toBe(false);
      const closed = once(socket, 'close');
      controller.abort();
      await running;
      expect(logs.find('lifecycle: stop failed')).toEqual([]);
      expect(app.api.server().listening).toBe(false);
      expect(app.admin.server().listening).toBe(false);
      await closed;
    } finally {
      agent.destroy();
      if (app.admin.server().listening) app.admin.server().close();
    }
  });
});

describe('createApp: routes added to the admin listener', () => {
  it('[SIM-embedded-only, CONSOLE-page] they read the metrics registry /metrics shows and answer before the 404', async () => {
    let given: Registry | undefined;
    const adminRoutes: AppOptions['adminRoutes'] = (registry) => {
      given = registry;
      return async (_req, res, url) => url.pathname === '/added' && (res.writeHead(204).end(), true);
    };
    const { app } = await buildWith((b) => b, { adminRoutes });
    expect(given).toBe(app.metrics.registry);
    const server = app.admin.server() as HttpServer;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect([(await fetch(`${base}/added`)).status, (await fetch(`${base}/simulator`)).status]).toEqual([204, 404]);
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });
});
