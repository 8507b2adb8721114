import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { backendTargets, reachable } from '../scripts/check-services.ts';

export interface RealEnv {
  readonly POSTGRES_DSN: string;
  readonly REDIS_ADDR: string;
  readonly NATS_URL: string;
}

/** The services of this machine (brief): used when the variables are not set. */
const LOOPBACK_DEFAULTS: RealEnv = {
  POSTGRES_DSN: 'postgres://postgres@127.0.0.1:5432/test',
  REDIS_ADDR: '127.0.0.1:6379',
  NATS_URL: 'nats://127.0.0.1:4222',
};

/** The backends' variables, each from `env` or, when unset or empty, from this machine's defaults (named in `fromDefaults`). */
export function realEnvFrom(env: NodeJS.ProcessEnv): { env: RealEnv; fromDefaults: string[] } {
  const pick = (name: keyof RealEnv): string => env[name] || LOOPBACK_DEFAULTS[name];
  const fromDefaults = (Object.keys(LOOPBACK_DEFAULTS) as (keyof RealEnv)[]).filter((name) => !env[name]);
  return { env: { POSTGRES_DSN: pick('POSTGRES_DSN'), REDIS_ADDR: pick('REDIS_ADDR'), NATS_URL: pick('NATS_URL') }, fromDefaults };
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;

/**
 * Why the real backends cannot be benchmarked, or undefined when they can: every endpoint must be on
 * loopback (load never leaves the machine) and accept a TCP connection within a second.
 */
export async function realUnavailableReason(env: RealEnv): Promise<string | undefined> {
  for (const target of backendTargets({ ...env })) {
    if (!LOOPBACK.test(target.host)) return `${target.name} is not a loopback address; the bench only loads loopback`;
    if (!(await reachable(target.host, target.port, 1_000))) return `${target.name} (${target.shown}) does not accept connections`;
  }
  return undefined;
}

export function newSchemaName(): string {
  return `bench_${randomBytes(5).toString('hex')}`;
}

async function withClient(dsn: string, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: dsn });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/**
 * VACUUM (ANALYZE) of a freshly seeded bench schema's orders table: statistics and visibility map as
 * autovacuum leaves them a minute later (migrations/002_orders_append_only.sql), so the list is
 * measured in the steady state rather than in the planner's first minute without statistics.
 */
export async function vacuumAnalyzeOrders(dsn: string, schema: string): Promise<void> {
  if (!/^bench_[a-z0-9_]+$/.test(schema)) throw new Error(`not a bench schema: ${schema}`);
  await withClient(dsn, (client) => client.query(`VACUUM (ANALYZE) "${schema}".orders`));
}

/** Safety net after the children dropped their own schemas: a crashed child leaves nothing behind. */
export async function dropSchemas(dsn: string, schemas: readonly string[]): Promise<void> {
  const bench = schemas.filter((schema) => /^bench_[a-z0-9_]+$/.test(schema));
  if (bench.length > 0)
    await withClient(dsn, async (client) => {
      // One query at a time: one pg client runs one anyway, and pg 8 deprecates queueing them.
      for (const schema of bench) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    });
}
