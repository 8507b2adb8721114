import { flow, type Case, type FlowContext } from '../case-model.ts';
import { INTERNAL, MSG, OK, recentIs, unauthenticated } from './messages.ts';

/**
 * The embedded simulator through its control API on the admin listener: the same cases run
 * in-process on the fakes and against a spawned `--embedded` executable. A case that moves the clock
 * resets the simulator when done, so later cases on the shared target run on real time.
 */

const MINUTE = 60_000;

async function withReset(t: FlowContext, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } finally {
    await t.target.simulator!.reset();
  }
}

async function adminCall(t: FlowContext, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(`${t.target.adminUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text() };
}

export const SIMULATOR_CASES: Case[] = [
  flow('simulator-only-on-embedded-admin-listener', ['SIM-embedded-only'], { api: 'rest', needs: ['admin'] }, async (t) => {
    const embedded = t.target.capabilities.has('faults');
    const state = await adminCall(t, 'GET', '/simulator');
    t.assert(
      state.status === (embedded ? 200 : 404),
      `admin GET /simulator answered ${state.status} ${embedded ? 'with' : 'without'} --embedded`,
    );
    if (!embedded) {
      for (const [method, path] of [
        ['PUT', '/simulator/components/cache'],
        ['POST', '/simulator/clock/advance'],
        ['POST', '/simulator/reset'],
      ] as const) {
        const reply = await adminCall(t, method, path, { state: 'down', ms: 1 });
        t.assert(
          reply.status === 404 && reply.text === '{"error":"not found"}',
          `admin ${method} ${path} answered ${reply.status} ${reply.text} without --embedded`,
        );
      }
    }
    t.check(
      await t.driver.raw!({ method: 'GET', path: '/simulator' }),
      { http: { status: 404, error: MSG.notFound } },
      'public GET /simulator',
    );
  }),
  flow('control-api-only-on-embedded-admin-listener', ['CONTROL-embedded-only'], { api: 'rest', needs: ['admin'] }, async (t) => {
    // The published-event recorder exists exactly where the control API does (an --embedded instance).
    const embedded = t.target.capabilities.has('recorders');
    const doc = await adminCall(t, 'GET', '/control/openapi.yaml');
    t.assert(
      doc.status === (embedded ? 200 : 404),
      `admin GET /control/openapi.yaml answered ${doc.status} ${embedded ? 'with' : 'without'} --embedded`,
    );
    if (embedded) {
      for (const path of ['/control/users', '/control/events', '/control/orders/{id}', '/control/cache/{id}', '/control/faults'])
        t.assert(doc.text.includes(`  ${path}:`), `the control API's OpenAPI document does not describe ${path}`);
      const taken = await adminCall(t, 'POST', '/control/users', { username: (await t.user()).username, password: 'x' });
      t.assert(taken.status === 400, `provisioning a taken username answered ${taken.status} ${taken.text}`);
    } else {
      const reply = await adminCall(t, 'POST', '/control/users', { username: 'nobody', password: 'x' });
      t.assert(
        reply.status === 404 && reply.text === '{"error":"not found"}',
        `admin POST /control/users answered ${reply.status} without --embedded`,
      );
    }
    for (const path of ['/control/openapi.yaml', '/control/events'])
      t.check(await t.driver.raw!({ method: 'GET', path }), { http: { status: 404, error: MSG.notFound } }, `public GET ${path}`);
  }),
  // The control API end to end over the public API, as a runner uses it (rules CONTROL-*): on an in-process
  // target stdout is not teed, so its log answers 404 there.
  flow(
    'control-api-provisions-reads-and-arms',
    ['CONTROL-users', 'CONTROL-recorders', 'CONTROL-logs', 'CONTROL-fault'],
    { api: 'rest', needs: ['admin', 'recorders'] },
    async (t) => {
      const credentials = { username: `control-${crypto.randomUUID()}`, password: `pw-${crypto.randomUUID()}` };
      const made = await adminCall(t, 'POST', '/control/users', credentials);
      t.assert(made.status === 201, `POST /control/users answered ${made.status} ${made.text}`);
      const login = await t.driver.login(credentials);
      t.check(login, { http: { status: 200 } }, 'login of the provisioned user');
      const auth = `Bearer ${(login.body as { token: string }).token}`;
      const created = await t.driver.createOrder(auth, { item: 'recorded', quantity: 3 });
      t.check(created, { http: { status: 201 } }, 'create');
      const id = (created.body as { id: string }).id;
      const userId = (JSON.parse(made.text) as { id: string }).id;
      const stored = await t.control().stored(id);
      t.assert(stored?.user_id === userId && stored.item === 'recorded', `GET /control/orders/${id}: ${JSON.stringify(stored)}`);
      t.assert((await t.control().cached(id))?.id === id, `GET /control/cache/${id}: not the created order`);
      const events = await t.waitFor(async () => {
        const seen = await t.control().events({ orderId: id });
        return seen.length > 0 && seen;
      }, 'the event of the create');
      t.assert(events.length === 1 && events[0]!.user_id === userId, `GET /control/events: ${JSON.stringify(events)}`);
      await t.control().injectFault('findById');
      t.assert(JSON.stringify(await t.control().armedFaults()) === '["findById"]', 'the fault is not listed as armed');
      t.check(
        await t.driver.getOrder(auth, crypto.randomUUID()),
        { http: { status: 500, error: MSG.internal } },
        'get with the fault armed',
      );
      t.assert((await t.control().armedFaults()).length === 0, 'the fault did not fire on the next store read');
      t.check(await t.driver.getOrder(auth, id), { http: { status: 200 } }, 'the next get is served');
      const log = await adminCall(t, 'GET', '/control/logs?after=0');
      if (t.target.hooks !== undefined) t.assert(log.status === 404, `GET /control/logs answered ${log.status} in process`);
      else {
        const lines = (JSON.parse(log.text) as { lines: string[] }).lines;
        t.assert(
          lines.some((line) => line.includes('"control: user provisioned"') && line.includes(credentials.username)),
          'GET /control/logs lacks the line of the user provisioned',
        );
        t.assert(!lines.some((line) => line.includes(credentials.password)), 'a provisioned password reached the log');
      }
    },
  ),
  flow('console-only-on-embedded-admin-listener', ['CONSOLE-page'], { api: 'rest', needs: ['admin'] }, async (t) => {
    const embedded = t.target.capabilities.has('faults');
    const paths = ['/console/', '/console/page.js', '/console/page.css', '/console/state'];
    for (const path of paths) {
      const response = await fetch(`${t.target.adminUrl}${path}`);
      const text = await response.text();
      if (!embedded) {
        t.assert(
          response.status === 404 && text === '{"error":"not found"}',
          `admin GET ${path} answered ${response.status} ${text} without --embedded`,
        );
        continue;
      }
      t.assert(response.status === 200, `admin GET ${path} answered ${response.status} with --embedded`);
      if (path === '/console/state') {
        t.assert(
          typeof (JSON.parse(text) as { counts?: { sessionsLive?: unknown } }).counts?.sessionsLive === 'number',
          `GET ${path}: ${text.slice(0, 200)}`,
        );
        continue;
      }
      t.assert(
        response.headers.get('content-security-policy')?.startsWith("default-src 'none'") === true,
        `GET ${path}: no restrictive policy`,
      );
      // Shipped files that fetch nothing from elsewhere: the only absolute URL is the SVG namespace (a name, never fetched).
      const absolute = (text.match(/https?:\/\/[^\s'"]+/g) ?? []).filter((url) => url !== 'http://www.w3.org/2000/svg');
      t.assert(absolute.length === 0, `GET ${path} names ${absolute.join(', ')}`);
    }
    const bare = await fetch(`${t.target.adminUrl}/console`, { redirect: 'manual' });
    const expected = embedded ? '308 console/' : '404 null';
    t.assert(
      `${bare.status} ${bare.headers.get('location')}` === expected,
      `admin GET /console answered ${bare.status} ${bare.headers.get('location')}, not ${expected}`,
    );
    t.check(
      await t.driver.raw!({ method: 'GET', path: '/console/' }),
      { http: { status: 404, error: MSG.notFound } },
      'public GET /console/',
    );
  }),
  flow('simulator-component-settings-and-log', ['SIM-component-settings', 'SIM-logged'], { needs: ['faults', 'logs'] }, async (t) => {
    const me = await t.user();
    const simulator = t.target.simulator!;
    const from = t.logs().length;
    await withReset(t, async () => {
      const state = await simulator.set('database', { failNext: 2 });
      t.assert(
        JSON.stringify(state) === '{"name":"database","state":"up","latencyMs":0,"failNext":2}',
        `PUT answered ${JSON.stringify(state)}`,
      );
      t.check(await t.driver.listOrders(me.auth, {}), INTERNAL, 'first injected failure');
      t.check(await t.driver.listOrders(me.auth, {}), INTERNAL, 'second injected failure');
      t.check(await t.driver.listOrders(me.auth, {}), OK, 'after failNext 2');
      await simulator.set('cache', { latencyMs: 1 });
      const seen = (await simulator.state()).components.map((c) => `${c.name}:${c.state}:${c.latencyMs}:${c.failNext}`).join(' ');
      t.assert(seen === 'database:up:0:0 cache:up:1:0 publisher:up:0:0', `simulator state ${seen}`);
      for (const [path, body, status] of [
        ['/simulator/components/queue', { state: 'down' }, 404],
        ['/simulator/components/cache', { state: 'sideways' }, 400],
      ] as const) {
        const reply = await adminCall(t, 'PUT', path, body);
        t.assert(
          reply.status === status && /^\{"error":"[^"]+"\}$/.test(reply.text),
          `PUT ${path} ${JSON.stringify(body)}: ${reply.status} ${reply.text}`,
        );
      }
    });
    // A spawned executable's lines arrive through its stdout pipe: wait for the last one.
    await t.waitFor(
      () =>
        t
          .logs()
          .slice(from)
          .some((l) => l.msg === 'simulator: reset'),
      '`simulator: reset` logged',
    );
    const changes = t
      .logs()
      .slice(from)
      .filter((l) => l.msg.startsWith('simulator: '));
    t.assert(
      changes.map((l) => `${l.msg}/${String(l['component'] ?? '')}`).join(' ') ===
        'simulator: component changed/database simulator: component changed/cache simulator: reset/',
      `simulator log lines: ${JSON.stringify(changes)}`,
    );
    t.assert(
      changes.every((l) => l.level === 'warn'),
      'simulator lines are not all at warn',
    );
  }),
  flow(
    'linger-follows-the-simulated-clock',
    ['SIM-clock-advance', 'SESSION-linger-reacquire', 'SESSION-linger-close', 'LIMIT-linger-constant'],
    { needs: ['faults', 'logs'] },
    async (t) => {
      const simulator = t.target.simulator!;
      await withReset(t, async () => {
        // Sessions earlier cases left lingering (shared demo accounts) close first.
        await simulator.advance(5 * MINUTE);
        const { me, id: a } = await t.userWithOrder();
        t.check(await t.driver.getOrder(me.auth, a), OK, 'view');
        const from = t.logs().length;
        const closed = () =>
          t
            .logs()
            .slice(from)
            .find((l) => l.msg === 'session: closed' && l['user'] === me.userId);
        await simulator.advance(4 * MINUTE);
        t.check(await t.driver.recent(me.auth), recentIs([a]), 'recent 4 minutes later (inside the linger window)');
        await simulator.advance(5 * MINUTE - 1_000);
        t.assert(closed() === undefined, 'the session closed before 5 minutes passed since the last request');
        await simulator.advance(2_000);
        const line = await t.waitFor(closed, '`session: closed` once 5 minutes passed');
        t.assert(
          line['views'] === 1 && JSON.stringify(line['recent']) === JSON.stringify([a]),
          `session: closed is ${JSON.stringify(line)}`,
        );
      });
    },
  ),
  flow(
    'token-expires-on-the-simulated-clock',
    ['SIM-clock-advance', 'LIMIT-token-lifetime', 'AUTH-5-invalid'],
    { needs: ['faults'] },
    async (t) => {
      const simulator = t.target.simulator!;
      await withReset(t, async () => {
        const me = await t.user();
        t.check(await t.driver.listOrders(me.auth, {}), OK, 'fresh token');
        // JWT_EXPIRY defaults to 1h.
        await simulator.advance(60 * MINUTE - 5_000);
        t.check(await t.driver.listOrders(me.auth, {}), OK, 'token 5 s before its expiry');
        await simulator.advance(6_000);
        t.check(await t.driver.listOrders(me.auth, {}), unauthenticated(MSG.invalidToken), 'token past JWT_EXPIRY');
      });
    },
  ),
];
