import type { Case, FlowContext } from '../case-model.ts';
import type { LogLine } from '../../test/support/log-capture.ts';

/** Spec 6: one order-placed event per create, the notifier's log line, the service's silence. */

const created = { http: { status: 201 }, grpc: { code: 'OK' } } as const;

function placedLine(t: FlowContext, orderId: string): LogLine | undefined {
  return t.logs().find((l) => l.msg === 'order placed' && l['order_id'] === orderId);
}

function serviceLines(t: FlowContext, from: number): LogLine[] {
  return t.logs().slice(from).filter((l) => l.msg.startsWith('order service'));
}

const cases: Case[] = [
  {
    kind: 'flow',
    name: 'notifier-logs-order-placed',
    rules: ['EVT-2-notifier', 'SVC-publish', 'EVT-1-publish'],
    needs: ['logs'],
    async run(t) {
      const me = await t.user();
      const id = await t.order(me, 'notified item', 4);
      const line = await t.waitFor(() => placedLine(t, id), '`order placed` log line from the notifier');
      t.assert(line.level === 'info', `order placed logged at ${line.level}, expected info`);
      t.assert(line['user_id'] === me.userId, `order placed user_id is ${String(line['user_id'])}, expected ${me.userId}`);
      t.assert(line['item'] === 'notified item', `order placed item is ${String(line['item'])}`);
    },
  },
  {
    kind: 'flow',
    name: 'one-event-with-chosen-payload',
    rules: ['EVT-1-publish', 'EVT-6-subject-payload', 'EVT-5-no-other', 'SVC-publish'],
    needs: ['faults'],
    async run(t) {
      const me = await t.user();
      const bus = t.target.hooks!.fakes!.bus;
      const before = bus.published.length;
      const reply = await t.driver.createOrder(me.auth, { item: 'evented', quantity: 9 });
      t.check(reply, created, 'create');
      const order = reply.body as { id: string; created_at: string };
      const events = bus.published.slice(before);
      t.assert(events.length === 1, `${events.length} events published for one create, expected exactly 1`);
      const event = events[0]!;
      t.assert(JSON.stringify(Object.keys(event).sort()) === '["created_at","item","order_id","quantity","user_id"]', `event fields are ${Object.keys(event).join(', ')}`);
      t.assert(event.order_id === order.id && event.user_id === me.userId && event.item === 'evented' && event.quantity === 9, `event is ${JSON.stringify(event)}`);
      t.assert(Date.parse(event.created_at) === Date.parse(order.created_at), `event created_at ${event.created_at} differs from the order's ${order.created_at}`);
      for (const other of ['getOrder', 'listOrders', 'recent'] as const) {
        const count = bus.published.length;
        if (other === 'getOrder') await t.driver.getOrder(me.auth, order.id);
        else if (other === 'listOrders') await t.driver.listOrders(me.auth, {});
        else await t.driver.recent(me.auth);
        t.assert(bus.published.length === count, `${other} published an event (spec 6 rule 5: no other events)`);
      }
    },
  },
  {
    kind: 'flow',
    name: 'real-broker-subject',
    rules: ['EVT-6-subject-payload'],
    needs: ['inProcess', 'logs'],
    backends: ['real'],
    async run(t) {
      const publisher = t.target.hooks!.backends.publisher as { subject?: string };
      t.assert(typeof publisher.subject === 'string' && publisher.subject.startsWith('orders.placed'), `broker subject is ${String(publisher.subject)}, expected orders.placed (plus the test run's isolation suffix)`);
      const me = await t.user();
      const id = await t.order(me);
      await t.waitFor(() => placedLine(t, id), 'the event went through the broker to the notifier', 5000);
    },
  },
  {
    kind: 'flow',
    name: 'service-silent-on-success',
    rules: ['EVT-3-service-logs'],
    needs: ['logs'],
    async run(t) {
      const me = await t.user();
      const from = t.logs().length;
      const id = await t.order(me);
      await t.driver.getOrder(me.auth, id);
      await t.driver.listOrders(me.auth, {});
      await t.waitFor(() => placedLine(t, id), 'order placed');
      const lines = serviceLines(t, from);
      t.assert(lines.length === 0, `the order service logged on success: ${JSON.stringify(lines)}`);
    },
  },
  {
    kind: 'flow',
    name: 'cache-write-failure-logged-once',
    rules: ['EVT-3-service-logs', 'SVC-cache-aside'],
    needs: ['faults', 'logs'],
    async run(t) {
      const me = await t.user();
      const from = t.logs().length;
      t.target.hooks!.fakes!.cacheFake.trouble.failNext(1);
      const reply = await t.driver.createOrder(me.auth, { item: 'x', quantity: 1 });
      t.check(reply, created, 'create with the cache write failing still succeeds');
      const lines = serviceLines(t, from);
      t.assert(lines.length === 1 && lines[0]!.msg === 'order service: cache write failed' && lines[0]!.level === 'warn', `order service lines: ${JSON.stringify(lines)}`);
      t.assert(lines[0]!['order_id'] === (reply.body as { id: string }).id, 'the failure line does not name the order');
    },
  },
  {
    kind: 'flow',
    name: 'publish-failure-logged-not-retried',
    rules: ['EVT-3-service-logs', 'EVT-7-delivery'],
    needs: ['faults', 'logs'],
    async run(t) {
      const me = await t.user();
      const from = t.logs().length;
      const bus = t.target.hooks!.fakes!.bus;
      const before = bus.published.length;
      bus.trouble.failNext(1);
      const reply = await t.driver.createOrder(me.auth, { item: 'x', quantity: 1 });
      t.check(reply, created, 'create with the publish failing still succeeds');
      const id = (reply.body as { id: string }).id;
      const lines = serviceLines(t, from);
      t.assert(lines.length === 1 && lines[0]!.msg === 'order service: publish failed' && lines[0]!.level === 'warn', `order service lines: ${JSON.stringify(lines)}`);
      await t.sleep(100);
      t.assert(bus.published.length === before, 'a failed publish was retried');
      t.assert(placedLine(t, id) === undefined, 'the notifier saw an event whose publish failed');
    },
  },
  {
    kind: 'request',
    name: 'no-webhook-or-event-stream-routes',
    rules: ['EVT-5-no-other'],
    op: 'raw',
    auth: 'Bearer {token}',
    input: { method: 'GET', path: '/events', headers: { accept: 'text/event-stream' } },
    expect: { http: { status: 404 } },
  },
  {
    kind: 'request',
    name: 'no-webhook-registration-route',
    rules: ['EVT-5-no-other'],
    op: 'raw',
    auth: 'Bearer {token}',
    input: { method: 'POST', path: '/webhooks', headers: { 'content-type': 'application/json' }, body: '{"url":"http://127.0.0.1:1/"}' },
    expect: { http: { status: 404 } },
  },
];

export const EVENT_CASES: Case[] = cases;
