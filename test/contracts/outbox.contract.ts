import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { ErrConflict } from '../../src/domain/errors.ts';
import type { Order } from '../../src/domain/order.ts';
import type { OrderPlacedEnvelope } from '../../src/ports/order-events.ts';
import type { IdempotencyClaim, OrderRepository, Placement } from '../../src/ports/order-repository.ts';
import type { NotificationLedger, OutboxStore } from '../../src/ports/outbox.ts';

/** The repository that places orders and the outbox that relays their events, over one store. */
export type OutboxUnderTest = { readonly repository: OrderRepository; readonly outbox: OutboxStore & NotificationLedger };

/**
 * The transactional outbox, idempotency keys and notification ledger, one contract for
 * the fake, PGlite and real Postgres. Cases may share one database: they only assert on their own
 * random ids, and relay everything pending (others' rows included) when they need an empty outbox.
 */
export function outboxContract(name: string, factory: () => OutboxUnderTest | Promise<OutboxUnderTest>): void {
  describe(`Outbox contract/${name}`, () => {
    let repository: OutboxUnderTest['repository'];
    let outbox: OutboxUnderTest['outbox'];
    beforeEach(async () => {
      ({ repository, outbox } = await factory());
    });

    const now = new Date('2030-01-01T00:00:00.000Z');
    function placement(userId = randomUUID(), item = 'widget', idempotency?: Partial<IdempotencyClaim>): Placement {
      const order: Order = { id: randomUUID(), userId, item, quantity: 2, status: 'pending', createdAt: new Date(now) };
      const event: OrderPlacedEnvelope = {
        id: randomUUID(),
        event: { order_id: order.id, user_id: userId, item, quantity: 2, created_at: now.toISOString() },
      };
      return {
        order,
        event,
        idempotency:
          idempotency === undefined
            ? undefined
            : { key: 'k', fingerprint: item, now, expiresAt: new Date(now.getTime() + 60_000), ...idempotency },
      };
    }

    /** Relays until a round sends nothing (the outbox is empty, or holds only what `acked` refuses), collecting what was sent. */
    async function relayAll(
      acked: (batch: readonly OrderPlacedEnvelope[]) => readonly string[] = (b) => b.map((e) => e.id),
    ): Promise<OrderPlacedEnvelope[]> {
      const sent: OrderPlacedEnvelope[] = [];
      for (let round = 0; round < 1_000; round++) {
        const { sent: marked } = await outbox.relayPending(100, async (batch) => {
          const ids = acked(batch);
          sent.push(...batch.filter((e) => ids.includes(e.id)));
          return ids;
        });
        if (marked === 0) return sent;
      }
      throw new Error('outbox never emptied');
    }

    it('place writes the order and its event together; the relay sends the event with its payload', async () => {
      const p = placement();
      expect(await repository.place(p)).toEqual({ outcome: 'created', order: p.order });
      expect(await repository.findById(p.order.id)).toEqual(p.order);
      const sent = await relayAll();
      expect(sent.filter((e) => e.id === p.event.id)).toEqual([p.event]);
    });

    it('creates placed at once are each written with their event; one the store refuses fails alone', async () => {
      const first = placement();
      await repository.place(first);
      // Array-literal syntax in an item must survive the statement's column arrays.
      const fresh = Array.from({ length: 5 }, (_, i) => placement(randomUUID(), i === 0 ? 'Café ☕ "q" \'s\' \\ {a,b} NULL' : 'widget'));
      // The same order id again (a unique violation) among the fresh ones, all in one turn.
      const duplicate: Placement = { ...placement(), order: { ...first.order } };
      const results = await Promise.allSettled([...fresh, duplicate].map((p) => repository.place(p)));
      expect(results.slice(0, 5).map((r) => r.status)).toEqual(Array(5).fill('fulfilled'));
      expect(results[5]).toMatchObject({ status: 'rejected', reason: expect.any(ErrConflict) });
      for (const p of fresh) expect(await repository.findById(p.order.id)).toEqual(p.order);
      const sent = await relayAll();
      const mine = new Set([...fresh, duplicate].map((p) => p.event.id));
      const byId = (a: OrderPlacedEnvelope, b: OrderPlacedEnvelope): number => a.id.localeCompare(b.id);
      expect(sent.filter((e) => mine.has(e.id)).sort(byId)).toEqual(fresh.map((p) => p.event).sort(byId));
    });

    it('an event marked sent is never claimed again; an unacknowledged one is', async () => {
      const p = placement();
      await repository.place(p);
      const first = await relayAll((batch) => batch.filter((e) => e.id !== p.event.id).map((e) => e.id));
      expect(first.some((e) => e.id === p.event.id)).toBe(false);
      const again = await relayAll();
      expect(again.map((e) => e.id)).toContain(p.event.id);
      expect((await relayAll()).map((e) => e.id)).not.toContain(p.event.id);
    });

    it('a batch whose send rejects stays pending', async () => {
      const p = placement();
      await repository.place(p);
      await expect(outbox.relayPending(1_000, async () => Promise.reject(new Error('broker down')))).rejects.toThrow();
      expect((await relayAll()).map((e) => e.id)).toContain(p.event.id);
    });

    it('two relays at once claim disjoint batches (each event sent once)', async () => {
      const placed = Array.from({ length: 30 }, () => placement());
      for (const p of placed) await repository.place(p);
      const sent: string[] = [];
      const relay = async (): Promise<void> => {
        for (;;) {
          const { claimed } = await outbox.relayPending(5, async (batch) => {
            await new Promise((resolve) => setTimeout(resolve, 5));
            sent.push(...batch.map((e) => e.id));
            return batch.map((e) => e.id);
          });
          if (claimed === 0) return;
        }
      };
      await Promise.all([relay(), relay()]);
      const mine = new Set(placed.map((p) => p.event.id));
      const mineSent = sent.filter((id) => mine.has(id));
      expect(mineSent.sort()).toEqual([...mine].sort());
    });

    it('backlog counts pending events and dates the oldest', async () => {
      await relayAll();
      expect(await outbox.backlog()).toEqual({ pending: 0, oldestCreatedAt: undefined });
      await repository.place(placement());
      await repository.place(placement());
      const backlog = await outbox.backlog();
      expect(backlog.pending).toBe(2);
      expect(backlog.oldestCreatedAt?.toISOString()).toBe(now.toISOString());
      await relayAll();
    });

    it('announceOnce announces an id once, across concurrent callers and repeats', async () => {
      const p = placement();
      await repository.place(p);
      const announced: string[] = [];
      const announce = (fresh: ReadonlySet<string>): void => void announced.push(...fresh);
      await Promise.all([outbox.announceOnce([p.event.id], announce), outbox.announceOnce([p.event.id], announce)]);
      await outbox.announceOnce([p.event.id, 'not-a-uuid'], announce);
      expect(announced).toEqual([p.event.id]);
    });

    it('announceOnce whose announce throws records nothing (announced again later)', async () => {
      const p = placement();
      await repository.place(p);
      await expect(
        outbox.announceOnce([p.event.id], () => {
          throw new Error('log failed');
        }),
      ).rejects.toThrow();
      const announced: string[] = [];
      await outbox.announceOnce([p.event.id], (fresh) => void announced.push(...fresh));
      expect(announced).toEqual([p.event.id]);
    });

    it('an announced event is done with: never announced again, never claimed by the relay again', async () => {
      const announcedP = placement();
      const unannounced = placement();
      await repository.place(announcedP);
      await repository.place(unannounced);
      // Announced before its sent mark (a relay whose mark was lost): the relay must not send it again.
      await outbox.announceOnce([announcedP.event.id], () => undefined);
      const mine = new Set([announcedP.event.id, unannounced.event.id]);
      expect((await relayAll()).filter((e) => mine.has(e.id)).map((e) => e.id)).toEqual([unannounced.event.id]);
      const announced: string[] = [];
      await outbox.announceOnce([announcedP.event.id, unannounced.event.id], (fresh) => void announced.push(...fresh));
      expect(announced).toEqual([unannounced.event.id]);
    });

    describe('idempotency keys', () => {
      it('the first use creates; a retry with the same fingerprint replays the original order and writes nothing; keys are per user', async () => {
        const user = randomUUID();
        const first = placement(user, 'a', {});
        expect((await repository.place(first)).outcome).toBe('created');
        const retry = placement(user, 'a', {});
        expect(await repository.place(retry)).toEqual({ outcome: 'replayed', order: first.order });
        expect(await repository.findById(retry.order.id)).toBeUndefined();
        expect((await relayAll()).map((e) => e.id)).not.toContain(retry.event.id);
        expect((await repository.place(placement(randomUUID(), 'a', {}))).outcome).toBe('created');
      });

      it('the same key with another fingerprint is a mismatch and writes nothing', async () => {
        const user = randomUUID();
        await repository.place(placement(user, 'a', {}));
        const other = placement(user, 'b', {});
        expect(await repository.place(other)).toEqual({ outcome: 'key-mismatch' });
        expect(await repository.findById(other.order.id)).toBeUndefined();
      });

      it('an expired key is claimed anew', async () => {
        const user = randomUUID();
        await repository.place(placement(user, 'a', { expiresAt: new Date(now.getTime() + 1_000) }));
        const later = placement(user, 'b', { now: new Date(now.getTime() + 1_000) });
        expect(await repository.place(later)).toEqual({ outcome: 'created', order: later.order });
        expect(await repository.place(placement(user, 'b', { now: new Date(now.getTime() + 2_000) }))).toEqual({
          outcome: 'replayed',
          order: later.order,
        });
      });

      it('concurrent first uses of one key create one order; the others replay it', async () => {
        const user = randomUUID();
        const attempts = Array.from({ length: 4 }, () => placement(user, 'same', {}));
        const results = await Promise.all(attempts.map((p) => repository.place(p)));
        const created = results.filter((r) => r.outcome === 'created');
        expect(created).toHaveLength(1);
        const id = created[0]?.outcome === 'created' ? created[0].order.id : undefined;
        for (const r of results) expect(r.outcome === 'key-mismatch' ? undefined : r.order.id).toBe(id);
        expect(await repository.listByUser(user, { limit: 10, offset: 0 })).toHaveLength(1);
      });

      it('purge removes expired keys', async () => {
        const user = randomUUID();
        await repository.place(placement(user, 'a', { expiresAt: new Date(now.getTime() + 1_000) }));
        await outbox.purge(new Date(now.getTime() + 1_000));
        // With the key gone, the same key and another body is a fresh claim, not a mismatch.
        expect((await repository.place(placement(user, 'b', {}))).outcome).toBe('created');
      });
    });
  });
}
