#!/usr/bin/env node
// The list query on its own (issue 16): a user holding 20,000 of 100,000 orders (interleaved with other
// users') in a private schema on the real PostgreSQL, read 20 at a time at offsets 0, 1,000 and 10,000
// by PostgresOrderRepository.listByUser, against the single LIMIT/OFFSET query it replaced (same
// repository, same row mapping). Calls alternate between the two in rounds, so a busy machine hits
// both alike. Twice: right after the bulk load (no statistics yet: the planner's worst case) and after
// VACUUM (ANALYZE) (the steady state autovacuum keeps, migrations/002_orders_append_only.sql). Then
// where the client CPU of a 20-row page goes. Usage:
//   POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test node bench/list-query.ts [--rounds 10] [--calls 30]
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { PostgresDatabase } from '../src/adapters/postgres/postgres-database.ts';
import { POSTGRES_DEFAULTS } from '../src/adapters/postgres/postgres-config.ts';
import { LIST_DEEP_SQL, LIST_SHALLOW_SQL, listSql, PostgresOrderRepository } from '../src/adapters/postgres/postgres-order-repository.ts';
import type { Transactional } from '../src/adapters/postgres/postgres-database.ts';
import { createLogger } from '../src/observability/logger.ts';
import { toOrderDto } from '../src/transports/http/dto.ts';
import { median, percentiles } from './percentiles.ts';
import { dropSchemas, newSchemaName, realEnvFrom, realUnavailableReason } from './real-env.ts';

/** The list query before issue 16, kept here only as the "before" of this comparison. */
const BEFORE_SQL = 'SELECT id, user_id, item, quantity, status, created_at FROM orders WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3';
const ORDERS = 20_000;
const LIMIT = 20;
const INTERLEAVE = 5;
const OFFSETS = [0, 1_000, 10_000] as const;

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '10' }, calls: { type: 'string', default: '30' } } });
const rounds = Number(values.rounds);
const calls = Number(values.calls);
const { env: real } = realEnvFrom(process.env);
const reason = await realUnavailableReason(real);
if (reason !== undefined) throw new Error(`real PostgreSQL unavailable: ${reason}`);
const out = (line: string): void => void process.stdout.write(`${line}\n`);

const schema = newSchemaName();
const db = new PostgresDatabase({ ...POSTGRES_DEFAULTS, dsn: real.POSTGRES_DSN, schema, poolSize: 2 }, createLogger('error'));
try {
  await db.init();
  const user = randomUUID();
  const seedStarted = performance.now();
  // The user's orders interleaved with other users' (every 5th row is theirs), as in a shared table:
  // their rows are spread over the heap, which is what walking an offset through the table pays for.
  const total = ORDERS * INTERLEAVE;
  await db.query(
    `INSERT INTO orders (id, user_id, item, quantity, status, created_at)
     SELECT gen_random_uuid(), CASE WHEN i % ${INTERLEAVE} = 0 THEN $1 ELSE 'other-' || (i % 997) END, 'item ' || i, 1 + i % 5, 'pending',
            now() - (${total} - i) * interval '1 second'
     FROM generate_series(1, ${total}) AS i`,
    [user],
  );
  out(`seeded ${total} orders, ${ORDERS} of them for the listed user, in ${(performance.now() - seedStarted).toFixed(0)} ms (schema ${schema})`);

  const variants = {
    before: new PostgresOrderRepository(beforeQueries()),
    after: new PostgresOrderRepository(db),
  };
  const sqlOf = { before: () => BEFORE_SQL, after: listSql };

  for (const state of ['fresh (no statistics)', 'vacuumed + analysed'] as const) {
    if (state === 'vacuumed + analysed') await db.query('VACUUM (ANALYZE) orders');
    out('');
    out(`## ${state}`);
    out('');
    out('| query | offset | plan nodes | p50 ms | p90 ms | server execution ms (median EXPLAIN ANALYZE, TIMING OFF) | pages read | client CPU µs/call |');
    out('|---|---|---|---|---|---|---|---|');
    for (const offset of OFFSETS) {
      const latencies: Record<keyof typeof variants, number[]> = { before: [], after: [] };
      const cpu: Record<keyof typeof variants, number> = { before: 0, after: 0 };
      for (let r = 0; r < rounds; r++) {
        for (const name of r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
          const started = process.cpuUsage();
          for (let i = 0; i < calls; i++) {
            const t = performance.now();
            const page = await variants[name].listByUser(user, { limit: LIMIT, offset });
            latencies[name].push(performance.now() - t);
            if (page.length !== LIMIT) throw new Error(`${name}: ${page.length} rows at offset ${offset}`);
          }
          const used = process.cpuUsage(started);
          cpu[name] += used.user + used.system;
        }
      }
      for (const name of ['before', 'after'] as const) {
        const { nodes, executionMs, buffers } = await explain(sqlOf[name](offset), [user, LIMIT, offset]);
        const l = latencies[name];
        out(`| ${name} | ${offset} | ${nodes} | ${median(l).toFixed(2)} | ${percentiles(l, [90])[0]!.toFixed(2)} | ${executionMs.toFixed(2)} | ${buffers} | ${(cpu[name] / l.length).toFixed(0)} |`);
      }
    }
  }

  out('');
  out('## Client CPU of a 20-row page at offset 0 (this process, µs per page)');
  out('');
  const page = await variants.after.listByUser(user, { limit: LIMIT, offset: 0 });
  out(`- listByUser (pg protocol, type parsers, row mapping): ${(await cpuPerCall(() => variants.after.listByUser(user, { limit: LIMIT, offset: 0 }))).toFixed(0)}`);
  const raw = new pg.Client({ connectionString: real.POSTGRES_DSN, options: `-c search_path=${schema}` });
  await raw.connect();
  out(`- same query on a bare pg.Client, text rows (no pool, no type parsers, no mapping): ${(await cpuPerCall(() => rawQuery(raw, user))).toFixed(0)}`);
  out(`- \`SELECT 1\` on the bare pg.Client (protocol floor): ${(await cpuPerCall(() => raw.query('SELECT 1'))).toFixed(0)}`);
  await raw.end();
  out(`- \`SELECT 1\` through the repository's pool (pool + protocol floor): ${(await cpuPerCall(() => db.query('SELECT 1'))).toFixed(0)}`);
  out(`- toOrderDto + JSON.stringify of the page (response body): ${(await cpuPerCall(async () => JSON.stringify({ orders: page.map(toOrderDto) }), 20_000)).toFixed(1)}`);
  const stamps = page.map((o) => o.createdAt.toISOString().replace('T', ' ').replace('Z', '+00'));
  const millis = page.map((o) => String(o.createdAt.getTime()));
  const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);
  const parseFloat8 = pg.types.getTypeParser(pg.types.builtins.FLOAT8);
  const micro = 20_000;
  out(`- created_at before: pg's text timestamptz parser, 20 values: ${(await cpuPerCall(async () => stamps.map((s) => parseTimestamptz(s)), micro)).toFixed(1)}`);
  out(`- created_at now: float8 epoch ms + new Date, 20 values: ${(await cpuPerCall(async () => millis.map((s) => new Date(parseFloat8(s) as number)), micro)).toFixed(1)}`);
} finally {
  await db.stop();
  await dropSchemas(real.POSTGRES_DSN, [schema]);
}

/**
 * The list as it was: the old statement, its timestamptz parsed by pg as before; the row is then given
 * the created_at_ms the repository's mapping reads (one multiplication, charged to "before").
 */
function beforeQueries(): Transactional {
  return {
    // The list never opens a transaction; creates are not measured here.
    transaction: (work) => db.transaction(work),
    async query(text, params) {
      if (text !== LIST_SHALLOW_SQL && text !== LIST_DEEP_SQL) return db.query(text, params);
      const result = await db.query<{ created_at: Date; created_at_ms?: number }>(BEFORE_SQL, params);
      for (const row of result.rows) row.created_at_ms = row.created_at.getTime();
      return result as never;
    },
  };
}

async function explain(sql: string, params: unknown[]): Promise<{ nodes: string; executionMs: number; buffers: number }> {
  const times: number[] = [];
  let nodes = '';
  let buffers = 0;
  for (let i = 0; i < 9; i++) {
    const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${sql}`, params);
    const [top] = rows[0]!['QUERY PLAN'];
    times.push(top['Execution Time']);
    nodes = flatten(top.Plan).join(' > ');
    buffers = top.Plan['Shared Hit Blocks'] + top.Plan['Shared Read Blocks'];
  }
  return { nodes, executionMs: median(times), buffers };
}

interface PlanNode {
  'Node Type': string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

function flatten(node: PlanNode): string[] {
  return [node['Node Type'], ...(node.Plans ?? []).flatMap(flatten)];
}

async function rawQuery(client: pg.Client, user: string): Promise<unknown> {
  const identity = (value: string): string => value;
  return client.query({ text: listSql(0), values: [user, LIMIT, 0], types: { getTypeParser: () => identity } });
}

async function cpuPerCall(call: () => Promise<unknown>, count = 400): Promise<number> {
  for (let i = 0; i < 50; i++) await call();
  const started = process.cpuUsage();
  for (let i = 0; i < count; i++) await call();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / count;
}
