import { describe, expect, it } from 'vitest';
import { LogCapture } from '../../test/support/log-capture.ts';
import { loadServiceConfig } from '../config/service-config.ts';
import { sessionKeyFromVerifiedSubject } from '../domain/session-key.ts';
import { runComponents } from '../lifecycle/runner.ts';
import { createLogger } from '../observability/logger.ts';
import { stdlibTransport } from '../transports/stdlib/stdlib-transport.ts';
import { createApp } from './create-app.ts';
import { createEmbeddedBackends } from './embedded-backends.ts';
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
async function run({ app, logger }: Awaited<ReturnType<typeof build>>): Promise<{ controller: AbortController; running: Promise<void> }> {
  const controller = new AbortController();
  const running = runComponents(app.components, controller.signal, logger);
  for (let i = 0; i < 200 && !(await app.checker.ready()).clean; i += 1) await new Promise((r) => setTimeout(r, 5));
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
    const { controller, running } = await run(built);
    await new Promise((r) => setTimeout(r, 20)); // the relay's first (empty) round is behind us
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
    let publisher;
    for (let i = 0; i < 400; i += 1) {
      publisher = (await app.checker.health()).nodes?.find((n) => n.name === 'publisher');
      if (publisher?.status !== 'ok') break;
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(publisher).toMatchObject({ name: 'publisher', status: 'unavailable' });
    expect(publisher?.error).toMatch(/^publisher: outbox backlog: 2 events pending/);
    controller.abort();
    await running;
  });
});
