import { describe, expect, it } from 'vitest';
import type { QueryResult } from 'pg';
import { ErrUnavailable } from '../../domain/errors.ts';
import type { OrderPlacedEnvelope } from '../../ports/order-events.ts';
import type { Queryable, Transactional } from './database.ts';
import { PostgresOutbox } from './outbox.ts';

type Answer = { rows: Array<Record<string, unknown>>; rowCount?: number | null } | Error;

/** A database that records each statement (and each transaction) and answers it with `answer`. */
function fakeDatabase(answer: (text: string) => Answer = () => ({ rows: [] })) {
  const log: string[] = [];
  const query: Queryable['query'] = async <R>(statement: unknown) => {
    const text = statement as string;
    log.push(text.split(' ')[0] as string);
    const result = answer(text);
    if (result instanceof Error) throw result;
    return { rowCount: result.rows.length, ...result } as unknown as QueryResult<R & object>;
  };
  const db: Transactional = {
    query,
    transaction: (work) => {
      log.push('transaction');
      return work({ query });
    },
  };
  return { db, log };
}

const ID = '0b9e2a4c-8d4f-4c1e-9a7b-3f2d1c0e5a6b';
const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('PostgresOutbox', () => {
  it('[EVT-7-delivery] nothing pending: the relay sends nothing; nothing acknowledged: it marks nothing sent', async () => {
    const batches: Array<readonly OrderPlacedEnvelope[]> = [];
    const send = async (batch: readonly OrderPlacedEnvelope[]): Promise<string[]> => {
      batches.push(batch);
      return [];
    };
    const empty = fakeDatabase();
    expect(await new PostgresOutbox(empty.db).relayPending(10, send)).toEqual({ claimed: 0, sent: 0 });
    expect(batches).toEqual([]);

    const pending = fakeDatabase((text) => (text.startsWith('SELECT') ? { rows: [{ id: ID, payload: { order_id: 'o1' } }] } : refused()));
    expect(await new PostgresOutbox(pending.db).relayPending(10, send)).toEqual({ claimed: 1, sent: 0 });
    expect(batches).toEqual([[{ id: ID, event: { order_id: 'o1' } }]]);
    expect(pending.log).toEqual(['transaction', 'SELECT']);
  });

  it('[EVT-7-delivery] an empty outbox has no backlog; purge counts the keys deleted, none when the driver gives no count', async () => {
    expect(await new PostgresOutbox(fakeDatabase().db).backlog()).toEqual({ pending: 0, oldestCreatedAt: undefined });
    expect(await new PostgresOutbox(fakeDatabase(() => ({ rows: [], rowCount: 3 })).db).purge(new Date())).toBe(3);
    expect(await new PostgresOutbox(fakeDatabase(() => ({ rows: [], rowCount: null })).db).purge(new Date())).toBe(0);
  });

  it('[EVT-7-delivery] ids that are no outbox row id are never announced, and cost no transaction', async () => {
    const { db, log } = fakeDatabase(() => ({ rows: [{ id: ID }] }));
    const announced: Array<ReadonlySet<string>> = [];
    await new PostgresOutbox(db).announceOnce(['not-a-uuid', ''], (fresh) => announced.push(fresh));
    expect(announced).toEqual([]);
    expect(log).toEqual([]);
  });

  it('[ERR-internal] a failing statement is translated, naming the operation', async () => {
    const outbox = new PostgresOutbox(fakeDatabase(refused).db);
    const failures = await Promise.all([
      outbox.relayPending(10, async () => []).catch((e: unknown) => e),
      outbox.backlog().catch((e: unknown) => e),
      outbox.purge(new Date()).catch((e: unknown) => e),
      outbox.announceOnce([ID], () => undefined).catch((e: unknown) => e),
    ]);
    for (const failure of failures) expect(failure).toBeInstanceOf(ErrUnavailable);
    expect(failures.map((f) => (f as Error).message)).toEqual(
      ['relay outbox', 'outbox backlog', 'purge idempotency keys', 'record notification'].map(
        (op) => `database: ${op}: connect ECONNREFUSED 127.0.0.1:5432`,
      ),
    );
  });
});
