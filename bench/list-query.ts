#!/usr/bin/env node
// The list query on its own: a user holding 20,000 of 100,000 orders (interleaved with other
// users') in a private schema on the real PostgreSQL, read 20 at a time at offsets 0, 1,000 and 10,000
// with each of: the shallow statement and the deferred join (adapters/postgres/order-repository.ts, prepared as
// the repository prepares them), and the single unprepared LIMIT/OFFSET query with a timestamptz column
// they replaced. Calls alternate between the three in rounds, so a busy machine hits all alike. Twice:
// right after the bulk load (no statistics yet: the planner's worst case) and after VACUUM (ANALYZE)
// (the steady state autovacuum keeps, migrations/002_orders_append_only.sql). Then what parsing
// created_at costs the client. Usage:
//   POSTGRES_DSN=postgres://postgres@127.0.0.1:5432/test node bench/list-query.ts [--rounds 10] [--calls 30]
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { PostgresDatabase, type NamedStatement } from '../src/adapters/postgres/database.ts';
import { POSTGRES_DEFAULTS } from '../src/adapters/postgres/config.ts';
import { LIST_DEEP_SQL, LIST_SHALLOW_SQL } from '../src/adapters/postgres/order-repository.ts';
import { createLogger } from '../src/observability/logger.ts';
import { median, percentiles } from './percentiles.ts';
import { dropSchemas, newSchemaName, realEnvFrom, realUnavailableReason } from './real-env.ts';

/** The list query before its rewrite, kept here only as the "before" of this comparison. */
const BEFORE_SQL =
  'SELECT id, user_id, item, quantity, status, created_at FROM orders WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3';
const VARIANTS = { shallow: LIST_SHALLOW_SQL, deep: LIST_DEEP_SQL, before: BEFORE_SQL } as const;
const ORDERS = 20_000;
const LIMIT = 20;
const INTERLEAVE = 5;

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '10' }, calls: { type: 'string', default: '30' } } });
const { env: real } = realEnvFrom(process.env);
const reason = await realUnavailableReason(real);
if (reason !== undefined) throw new Error(`real PostgreSQL unavailable: ${reason}`);
const out = (line: string): void => void process.stdout.write(`${line}\n`);

const schema = newSchemaName();
const db = new PostgresDatabase({ ...POSTGRES_DEFAULTS, dsn: real.POSTGRES_DSN, schema, poolSize: 2 }, createLogger('error'));
try {
  await db.init();
  const user = randomUUID();
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
  const names = Object.keys(VARIANTS) as (keyof typeof VARIANTS)[];
  const statement = (name: keyof typeof VARIANTS, offset: number): string | NamedStatement =>
    name === 'before' ? BEFORE_SQL : { name: `bench_list_${name}`, text: VARIANTS[name], values: [user, LIMIT, offset] };
  for (const state of ['fresh (no statistics)', 'vacuumed + analysed'] as const) {
    if (state === 'vacuumed + analysed') await db.query('VACUUM (ANALYZE) orders');
    out(`\n## ${state}\n`);
    out(
      '| query | offset | plan nodes | p50 ms | p90 ms | server execution ms (median EXPLAIN ANALYZE, TIMING OFF) | pages read | client CPU µs/call |',
    );
    out('|---|---|---|---|---|---|---|---|');
    for (const offset of [0, 1_000, 10_000]) {
      const latencies = new Map(names.map((name) => [name, [] as number[]]));
      const cpuUs = new Map(names.map((name) => [name, 0]));
      for (let r = 0; r < Number(values.rounds); r++) {
        for (const name of r % 2 === 0 ? names : [...names].reverse()) {
          const started = process.cpuUsage();
          for (let i = 0; i < Number(values.calls); i++) {
            const t = performance.now();
            const { rows } = await db.query(statement(name, offset), [user, LIMIT, offset]);
            latencies.get(name)?.push(performance.now() - t);
            if (rows.length !== LIMIT) throw new Error(`${name}: ${rows.length} rows at offset ${offset}`);
          }
          const used = process.cpuUsage(started);
          cpuUs.set(name, (cpuUs.get(name) ?? 0) + used.user + used.system);
        }
      }
      for (const name of names) {
        const { nodes, executionMs, buffers } = await explain(VARIANTS[name], [user, LIMIT, offset]);
        const l = latencies.get(name) ?? [];
        out(
          `| ${name} | ${offset} | ${nodes} | ${median(l).toFixed(2)} | ${percentiles(l, [90])[0]!.toFixed(2)} | ${executionMs.toFixed(2)} | ${buffers} | ${((cpuUs.get(name) ?? 0) / l.length).toFixed(0)} |`,
        );
      }
    }
  }

  out('\n## Client CPU of parsing created_at, 20 values (this process, µs)\n');
  const now = Date.now();
  const stamps = Array.from({ length: LIMIT }, (_, i) => new Date(now - i * 1000).toISOString().replace('T', ' ').replace('Z', '+00'));
  const millis = Array.from({ length: LIMIT }, (_, i) => String(now - i * 1000));
  const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);
  const parseFloat8 = pg.types.getTypeParser(pg.types.builtins.FLOAT8);
  out(`- before: pg's text timestamptz parser: ${cpuPerCall(() => stamps.map((s) => parseTimestamptz(s))).toFixed(1)}`);
  out(`- now: float8 epoch ms + new Date: ${cpuPerCall(() => millis.map((s) => new Date(parseFloat8(s) as number))).toFixed(1)}`);
} finally {
  await db.stop();
  await dropSchemas(real.POSTGRES_DSN, [schema]);
}

interface PlanNode {
  'Node Type': string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

async function explain(sql: string, params: unknown[]): Promise<{ nodes: string; executionMs: number; buffers: number }> {
  const flatten = (node: PlanNode): string[] => [node['Node Type'], ...(node.Plans ?? []).flatMap(flatten)];
  const times: number[] = [];
  let top: { Plan: PlanNode; 'Execution Time': number } | undefined;
  for (let i = 0; i < 9; i++) {
    const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(
      `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${sql}`,
      params,
    );
    [top] = rows[0]!['QUERY PLAN'];
    times.push(top['Execution Time']);
  }
  return {
    nodes: flatten(top!.Plan).join(' > '),
    executionMs: median(times),
    buffers: top!.Plan['Shared Hit Blocks'] + top!.Plan['Shared Read Blocks'],
  };
}

function cpuPerCall(call: () => unknown, count = 20_000): number {
  for (let i = 0; i < 500; i++) call();
  const started = process.cpuUsage();
  for (let i = 0; i < count; i++) call();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / count;
}
