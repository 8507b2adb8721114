import { flow, type Case, type FlowContext } from '../case-model.ts';
import { CREATED } from './messages.ts';

/**
 * Idempotent create (draft-ietf-httpapi-idempotency-key-header): the Idempotency-Key
 * header on REST, `idempotency-key` metadata on gRPC, the same rules on both.
 */

const reused = {
  http: { status: 422, error: 'Idempotency-Key already used for a different request' },
  grpc: { code: 'FAILED_PRECONDITION', message: 'Idempotency-Key already used for a different request' },
} as const;
const invalidKey = 'invalid Idempotency-Key header (expected a quoted string of 1 to 255 printable ASCII characters)';

function uniqueKey(): string {
  return `"${crypto.randomUUID()}"`;
}

/**
 * Ids of the caller's orders with one of `items` among its newest 100. Items are unique per case run, so
 * this counts what the case created even for a black-box target's long-lived users (--user).
 */
async function idsWithItems(t: FlowContext, auth: string, items: readonly string[]): Promise<string[]> {
  const reply = await t.driver.listOrders(auth, { limit: 100 });
  return ((reply.body as { orders: Array<{ id: string; item: string }> }).orders ?? [])
    .filter((o) => items.includes(o.item))
    .map((o) => o.id);
}

export const IDEMPOTENCY_CASES: Case[] = [
  flow('retry-with-same-key-returns-the-original-order', ['IDEM-replay'], {}, async (t) => {
    const me = await t.user();
    const key = uniqueKey();
    const item = `once ${crypto.randomUUID()}`;
    const first = await t.driver.createOrder(me.auth, { item, quantity: 2 }, { idempotencyKey: key });
    t.check(first, CREATED, 'first create');
    const again = await t.driver.createOrder(me.auth, { item, quantity: 2 }, { idempotencyKey: key });
    t.check(again, CREATED, 'retry with the same key and body');
    t.assert(
      JSON.stringify(again.body) === JSON.stringify(first.body),
      `the retry answered ${JSON.stringify(again.body)}, not the original ${JSON.stringify(first.body)}`,
    );
    const ids = await idsWithItems(t, me.auth, [item]);
    t.assert(ids.length === 1, `${ids.length} orders exist after a create and its retry, expected 1`);
  }),
  flow('same-key-different-body-is-rejected', ['IDEM-mismatch'], {}, async (t) => {
    const me = await t.user();
    const key = uniqueKey();
    const [item, other] = [`first ${crypto.randomUUID()}`, `other ${crypto.randomUUID()}`];
    t.check(await t.driver.createOrder(me.auth, { item, quantity: 1 }, { idempotencyKey: key }), CREATED, 'first create');
    t.check(await t.driver.createOrder(me.auth, { item, quantity: 2 }, { idempotencyKey: key }), reused, 'same key, other quantity');
    t.check(await t.driver.createOrder(me.auth, { item: other, quantity: 1 }, { idempotencyKey: key }), reused, 'same key, other item');
    const ids = await idsWithItems(t, me.auth, [item, other]);
    t.assert(ids.length === 1, `${ids.length} orders exist, expected 1`);
  }),
  flow('keys-are-scoped-per-user', ['IDEM-scope'], {}, async (t) => {
    const alice = await t.user('alice');
    const bob = await t.user('bob');
    const key = uniqueKey();
    const mine = await t.driver.createOrder(alice.auth, { item: 'shared key', quantity: 1 }, { idempotencyKey: key });
    const theirs = await t.driver.createOrder(bob.auth, { item: 'shared key', quantity: 1 }, { idempotencyKey: key });
    t.check(mine, CREATED, 'alice');
    t.check(theirs, CREATED, 'bob with the same key');
    t.assert((mine.body as { id: string }).id !== (theirs.body as { id: string }).id, 'two users with one key got the same order');
  }),
  flow('no-key-means-every-create-is-new', ['IDEM-replay'], {}, async (t) => {
    const me = await t.user();
    const a = await t.driver.createOrder(me.auth, { item: 'same', quantity: 1 });
    const b = await t.driver.createOrder(me.auth, { item: 'same', quantity: 1 });
    t.check(a, CREATED, 'first');
    t.check(b, CREATED, 'second');
    t.assert((a.body as { id: string }).id !== (b.body as { id: string }).id, 'two keyless creates returned one order');
  }),
  flow('malformed-key-is-400', ['IDEM-format'], {}, async (t) => {
    const me = await t.user();
    for (const key of ['""', '"unterminated', 'two words', `"${'k'.repeat(256)}"`]) {
      const reply = await t.driver.createOrder(me.auth, { item: 'x', quantity: 1 }, { idempotencyKey: key });
      t.check(
        reply,
        { http: { status: 400, error: invalidKey }, grpc: { code: 'INVALID_ARGUMENT', message: invalidKey } },
        `key ${JSON.stringify(key.slice(0, 20))}`,
      );
    }
    t.check(
      await t.driver.createOrder(me.auth, { item: 'x', quantity: 1 }, { idempotencyKey: 'bare-token-1' }),
      CREATED,
      'a bare token is accepted',
    );
    t.check(
      await t.driver.createOrder(me.auth, { item: 'x', quantity: 1 }, { idempotencyKey: `"${'k'.repeat(255)}"` }),
      CREATED,
      'a 255-character key',
    );
  }),
  flow('replay-publishes-no-second-event', ['IDEM-replay', 'EVT-1-publish'], { needs: ['recorders'] }, async (t) => {
    const me = await t.user();
    const control = t.control();
    const key = uniqueKey();
    const first = await t.driver.createOrder(me.auth, { item: 'evented once', quantity: 1 }, { idempotencyKey: key });
    t.check(first, CREATED, 'first create');
    const id = (first.body as { id: string }).id;
    await t.driver.createOrder(me.auth, { item: 'evented once', quantity: 1 }, { idempotencyKey: key });
    await t.waitFor(async () => (await control.events({ orderId: id })).length > 0, 'the event');
    await t.sleep(100);
    const events = await control.events({ userId: me.userId });
    t.assert(events.length === 1, `${events.length} events for one create and its retry, expected 1`);
  }),
];
