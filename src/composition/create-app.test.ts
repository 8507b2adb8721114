import { describe, expect, it } from 'vitest';
import { LogCapture } from '../../test/support/log-capture.ts';
import { loadServiceConfig } from '../config/service-config.ts';
import { sessionKeyFromVerifiedSubject } from '../domain/session-key.ts';
import { runComponents } from '../lifecycle/runner.ts';
import { createLogger } from '../observability/logger.ts';
import { stdlibTransport } from '../transports/stdlib/stdlib-transport.ts';
import { createApp } from './create-app.ts';
import { createEmbeddedBackends } from './embedded-backends.ts';

async function build() {
  const logs = new LogCapture();
  const logger = createLogger('debug', logs);
  const config = loadServiceConfig({ HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0' }, { embedded: true });
  const backends = await createEmbeddedBackends(logger, { seedDemoUsers: false });
  const app = createApp({ config, logger, backends, transport: stdlibTransport, serviceName: 'orders-test' });
  return { app, logs, logger };
}

describe('createApp composition (spec 3.4 rule 1, 3.2 rule 5, 2.3)', () => {
  it('orders components by dependency: tracer first, backends, sessions, notifier, then the listeners', async () => {
    const { app } = await build();
    // Stop runs in reverse: listeners close (in-flight requests finish) before sessions flush, and the
    // sessions flush before the backends and the tracer go away.
    expect(app.components.map((c) => c.name)).toEqual(['tracer', 'database', 'cache', 'publisher', 'sessions', 'notifier', 'api', 'admin']);
  });

  it('health reports the database, the cache and the publisher; readiness only the public listener, never sessions', async () => {
    const { app } = await build();
    await app.components.find((c) => c.name === 'database')!.init?.();
    const health = await app.checker.health();
    expect(health.nodes?.map((n) => n.name)).toEqual(['database', 'cache', 'publisher']);
    const ready = await app.checker.ready();
    expect(ready).toEqual({ clean: false, nodes: [{ name: 'api', status: 'unavailable', error: 'api: not accepting connections yet' }] });
  });

  it('a run of the whole app: ready once bound, and the shutdown flushes open sessions before `stopped` is possible', async () => {
    const { app, logs, logger } = await build();
    const controller = new AbortController();
    const running = runComponents(app.components, controller.signal, logger);
    for (let i = 0; i < 200 && !(await app.checker.ready()).clean; i += 1) await new Promise((r) => setTimeout(r, 5));
    expect(await app.checker.ready()).toEqual({ clean: true, nodes: [{ name: 'api', status: 'ok' }] });

    const lease = app.core.sessions.acquire({ sessionKey: sessionKeyFromVerifiedSubject('user-1'), signal: controller.signal });
    lease.session.recordView('order-1');
    controller.abort();
    await running;
    expect(logs.find('session: closed')).toEqual([expect.objectContaining({ user: 'user-1', views: 1, recent: ['order-1'] })]);
    expect(app.api.server().listening).toBe(false);
    expect(app.admin.server().listening).toBe(false);
  });
});
