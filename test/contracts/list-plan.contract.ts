import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Transactional } from '../../src/adapters/postgres/database.ts';
import { DEFERRED_JOIN_MIN_OFFSET, listSql, PostgresOrderRepository } from '../../src/adapters/postgres/order-repository.ts';

/** The scale of the list benchmark (bench/list-query.ts): one user with 20,000 orders, read 20 at a time. */
const ORDERS = 20_000;
const LIMIT = 20;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

type PlanMode = 'custom' | 'generic';

/** Anything that reads or orders the user's rows other than the index walk is a regression. */
const REGRESSIONS = ['Sort', 'Incremental Sort', 'Bitmap Heap Scan', 'Bitmap Index Scan', 'Seq Scan'];

/**
 * The list queries' plans (spec 4.1 rule 6, limit/offset newest first) on a real planner: the first
 * pages by an index scan of orders_user_created_idx, deep offsets walked by an index-only scan of it,
 * and nothing reads the user's rows in bulk or sorts them. Plan node types, not timings (those are in npm run bench). The table is vacuumed and
 * analysed first, the steady state autovacuum keeps it in (migrations/002_orders_append_only.sql).
 */
export function listPlanContract(name: string, database: () => Transactional): void {
  describe(`list query plan/${name}`, () => {
    const user = randomUUID();
    let db: Transactional;

    beforeAll(async () => {
      db = database();
      // Set-up in one statement: two orders per second, so created_at ties are broken by id desc.
      await db.query(
        `INSERT INTO orders (id, user_id, item, quantity, status, created_at)
         SELECT md5($1 || i)::uuid, $1, 'item ' || i, 1 + i % 5, 'pending', $2::timestamptz + (i / 2) * interval '1 second'
         FROM generate_series(1, $3::int) AS i`,
        [user, '2024-05-06T07:08:09.123Z', ORDERS],
      );
      // Another user's orders interleaved in time: the filter, not the ordering, keeps them out.
      await db.query(
        `INSERT INTO orders (id, user_id, item, quantity, status, created_at)
         SELECT gen_random_uuid(), $1, 'other', 1, 'pending', $2::timestamptz + i * interval '1 second'
         FROM generate_series(1, 500) AS i`,
        [randomUUID(), '2024-05-06T07:08:09.123Z'],
      );
      await db.query('VACUUM (ANALYZE) orders');
    }, 120_000);

    /**
     * The plan of the statement listByUser sends for this offset: as planned for these values, and as the
     * generic plan Postgres may settle on for the prepared statement (adapters/postgres/database.ts NamedStatement),
     * which knows no offset.
     */
    async function plan(offset: number, mode: PlanMode): Promise<PlanNode[]> {
      type Explained = { 'QUERY PLAN': [{ Plan: PlanNode }] };
      if (mode === 'custom') {
        const { rows } = await db.query<Explained>(`EXPLAIN (FORMAT JSON) ${listSql(offset)}`, [user, LIMIT, offset]);
        return nodes(rows[0]!['QUERY PLAN'][0].Plan);
      }
      return db.transaction(async (tx) => {
        await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
        await tx.query(`PREPARE list_plan_probe (text, int, int) AS ${listSql(offset)}`);
        try {
          const { rows } = await tx.query<Explained>(`EXPLAIN (FORMAT JSON) EXECUTE list_plan_probe('${user}', ${LIMIT}, ${offset})`);
          return nodes(rows[0]!['QUERY PLAN'][0].Plan);
        } finally {
          await tx.query('DEALLOCATE list_plan_probe');
        }
      });
    }

    function expectNoRegression(planNodes: PlanNode[]): void {
      const types = planNodes.map((n) => n['Node Type']);
      expect(
        types.filter((type) => REGRESSIONS.includes(type)),
        `plan nodes: ${types.join(' > ')}`,
      ).toEqual([]);
    }

    const MODES: readonly PlanMode[] = ['custom', 'generic'];
    const each = (offsets: number[]): [number, PlanMode][] =>
      offsets.flatMap((offset) => MODES.map((mode): [number, PlanMode] => [offset, mode]));

    it.each(each([0, DEFERRED_JOIN_MIN_OFFSET - LIMIT]))(
      'offset %i (first pages, %s plan): an index scan of orders_user_created_idx, no sort, no bitmap or sequential scan',
      async (offset, mode) => {
        const planNodes = await plan(offset, mode);
        expect(planNodes).toContainEqual(expect.objectContaining({ 'Node Type': 'Index Scan', 'Index Name': 'orders_user_created_idx' }));
        expectNoRegression(planNodes);
      },
    );

    it.each(each([DEFERRED_JOIN_MIN_OFFSET, 10_000, ORDERS - LIMIT]))(
      'offset %i (deep pages, %s plan): an index-only scan of orders_user_created_idx, no sort, no bitmap or sequential scan',
      async (offset, mode) => {
        const planNodes = await plan(offset, mode);
        expect(planNodes).toContainEqual(
          expect.objectContaining({ 'Node Type': 'Index Only Scan', 'Index Name': 'orders_user_created_idx' }),
        );
        expectNoRegression(planNodes);
      },
    );

    it.each([0, 1, DEFERRED_JOIN_MIN_OFFSET - 1, DEFERRED_JOIN_MIN_OFFSET, 10_000, ORDERS - LIMIT, ORDERS - 7, ORDERS, ORDERS + 5])(
      'offset %i returns exactly the rows of a plain ORDER BY created_at DESC, id DESC LIMIT/OFFSET',
      async (offset) => {
        const expected = await db.query<{ id: string; created_at: Date }>(
          'SELECT id, created_at FROM orders WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3',
          [user, LIMIT, offset],
        );
        const page = await new PostgresOrderRepository(db).listByUser(user, { limit: LIMIT, offset });
        expect(page.map((o) => o.id)).toEqual(expected.rows.map((r) => r.id));
        expect(page.map((o) => o.createdAt.toISOString())).toEqual(expected.rows.map((r) => r.created_at.toISOString()));
        expect(page).toHaveLength(Math.max(0, Math.min(LIMIT, ORDERS - offset)));
        expect(page.every((o) => o.userId === user)).toBe(true);
      },
    );
  });
}
