import { flow, type Case, type FlowContext } from '../case-model.ts';
import { CREATED } from './messages.ts';
import type { LogLine } from '../../test/support/log-capture.ts';

/** Spec 6: one order-placed event per create, the notifier's log line, the service's silence. */

function placedLine(t: FlowContext, orderId: string): LogLine | undefined {
  return t.logs().find((l) => l.msg === 'order placed' && l['order_id'] === orderId);
}

function serviceLines(t: FlowContext, from: number): LogLine[] {
  return t
    .logs()
    .slice(from)
    .filter((l) => l.msg.startsWith('order service'));
}

export const EVENT_CASES: Case[] = [
  flow('notifier-logs-order-placed', ['EVT-2-notifier', 'SVC-publish', 'EVT-1-publish'], { needs: ['logs'] }, async (t) => {
    const { me, id } = await t.userWithOrder('notified item', 4);
    const line = await t.waitFor(() => placedLine(t, id), '`order placed` log line from the notifier');
    t.assert(line.level === 'info', `order placed logged at ${line.level}, expected info`);
    t.assert(line['user_id'] === me.userId, `order placed user_id is ${String(line['user_id'])}, expected ${me.userId}`);
    t.assert(line['item'] === 'notified item', `order placed item is ${String(line['item'])}`);
  }),
  flow(
    'one-event-with-chosen-payload',
    ['EVT-1-publish', 'EVT-6-subject-payload', 'EVT-5-no-other', 'SVC-publish'],
    { needs: ['recorders'] },
    async (t) => {
      const me = await t.user();
      const control = t.control();
      const reply = await t.driver.createOrder(me.auth, { item: 'evented', quantity: 9 });
      t.check(reply, CREATED, 'create');
      const order = reply.body as { id: string; created_at: string };
      // The relay publishes from the outbox after the create, so wait for it, then a little more.
      await t.waitFor(async () => (await control.events({ orderId: order.id })).length > 0, 'the relay to publish the event');
      await t.sleep(100);
      const events = await control.events({ userId: me.userId });
      t.assert(events.length === 1, `${events.length} events published for one create, expected exactly 1`);
      const event = events[0]!;
      t.assert(
        JSON.stringify(Object.keys(event).sort()) === '["created_at","item","order_id","quantity","user_id"]',
        `event fields are ${Object.keys(event).join(', ')}`,
      );
      t.assert(
        event.order_id === order.id && event.user_id === me.userId && event.item === 'evented' && event.quantity === 9,
        `event is ${JSON.stringify(event)}`,
      );
      t.assert(
        Date.parse(event.created_at) === Date.parse(order.created_at),
        `event created_at ${event.created_at} differs from the order's ${order.created_at}`,
      );
      for (const other of ['getOrder', 'listOrders', 'recent'] as const) {
        const count = (await control.events()).length;
        if (other === 'getOrder') await t.driver.getOrder(me.auth, order.id);
        else if (other === 'listOrders') await t.driver.listOrders(me.auth, {});
        else await t.driver.recent(me.auth);
        t.assert((await control.events()).length === count, `${other} published an event (spec 6 rule 5: no other events)`);
      }
    },
  ),
  flow('real-broker-subject', ['EVT-6-subject-payload'], { needs: ['inProcess', 'logs'], backends: ['real'] }, async (t) => {
    const publisher = t.target.hooks!.backends.publisher as { subject?: string };
    t.assert(
      typeof publisher.subject === 'string' && publisher.subject.startsWith('orders.placed'),
      `broker subject is ${String(publisher.subject)}, expected orders.placed (plus the test run's isolation suffix)`,
    );
    const { id } = await t.userWithOrder();
    await t.waitFor(() => placedLine(t, id), 'the event went through the broker to the notifier');
  }),
  flow('service-silent-on-success', ['EVT-3-service-logs'], { needs: ['logs'] }, async (t) => {
    const me = await t.user();
    const from = t.logs().length;
    const id = await t.order(me);
    await t.driver.getOrder(me.auth, id);
    await t.driver.listOrders(me.auth, {});
    await t.waitFor(() => placedLine(t, id), 'order placed');
    const lines = serviceLines(t, from);
    t.assert(lines.length === 0, `the order service logged on success: ${JSON.stringify(lines)}`);
  }),
  flow('cache-write-failure-logged-once', ['EVT-3-service-logs', 'SVC-cache-aside'], { needs: ['faults', 'logs'] }, async (t) => {
    const me = await t.user();
    const from = t.logs().length;
    await t.target.simulator!.set('cache', { failNext: 1 });
    const reply = await t.driver.createOrder(me.auth, { item: 'x', quantity: 1 });
    t.check(reply, CREATED, 'create with the cache write failing still succeeds');
    await t.waitFor(() => serviceLines(t, from).length > 0, 'the order service to log the cache write failure');
    await t.sleep(30);
    const lines = serviceLines(t, from);
    t.assert(
      lines.length === 1 && lines[0]!.msg === 'order service: cache write failed' && lines[0]!.level === 'warn',
      `order service lines: ${JSON.stringify(lines)}`,
    );
    t.assert(lines[0]!['order_id'] === (reply.body as { id: string }).id, 'the failure line does not name the order');
  }),
  flow(
    'publish-failure-logged-by-relay-and-retried',
    ['EVT-3-service-logs', 'EVT-7-delivery'],
    { needs: ['faults', 'recorders', 'logs'] },
    async (t) => {
      const me = await t.user();
      const from = t.logs().length;
      await t.target.simulator!.set('publisher', { failNext: 1 });
      const reply = await t.driver.createOrder(me.auth, { item: 'x', quantity: 1 });
      t.check(reply, CREATED, 'create with the first publish failing still succeeds');
      const id = (reply.body as { id: string }).id;
      const failure = await t.waitFor(
        () =>
          t
            .logs()
            .slice(from)
            .find((l) => l.msg === 'outbox relay: publish failed'),
        'the relay to log `outbox relay: publish failed`',
      );
      t.assert(failure.level === 'warn', `publish failed logged at ${failure.level}, expected warn`);
      await t.waitFor(() => placedLine(t, id), 'the retried event to reach the notifier');
      t.assert((await t.control().events({ orderId: id })).length === 1, 'the retried event was stored more than once');
      const lines = serviceLines(t, from);
      t.assert(lines.length === 0, `the order service itself logged: ${JSON.stringify(lines)}`);
      t.assert(t.logs().filter((l) => l.msg === 'order placed' && l['order_id'] === id).length === 1, 'order placed logged more than once');
    },
  ),
  flow('outbox-backlog-is-a-metric', ['EVT-7-delivery'], { needs: ['faults', 'admin', 'logs'] }, async (t) => {
    const me = await t.user();
    const simulator = t.target.simulator!;
    const pending = async (): Promise<number> => {
      const match = /^orders_outbox_pending_events (\S+)$/m.exec(await t.scrape());
      t.assert(match !== null, 'orders_outbox_pending_events is not on /metrics');
      return Number(match![1]);
    };
    t.assert(
      /^orders_outbox_oldest_pending_age_seconds /m.test(await t.scrape()),
      'orders_outbox_oldest_pending_age_seconds is not on /metrics',
    );
    await simulator.set('publisher', { failNext: 1_000 });
    const id = await t.order(me, 'held back', 1);
    await t.waitFor(async () => (await pending()) >= 1, 'orders_outbox_pending_events above 0 while the broker refuses every publish');
    await simulator.set('publisher', { failNext: 0 });
    await t.waitFor(() => placedLine(t, id), 'the held-back event once the broker works');
  }),
];
