/**
 * The relational database component (health node `database`, spec 2.3): owns the pg pools the repositories
 * borrow, migrates at init (spec 3.4 rule 2: one connection attempt, no retry) and never lets a lost
 * connection crash the process (spec 3.4).
 */
import pg from 'pg';
import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
import { ErrUnavailable } from '../../domain/errors.ts';
import type { Component } from '../../lifecycle/component.ts';
import type { Logger } from '../../ports/logger.ts';
import { describeDsn, dsnSecrets, validSchemaName, type PostgresConfig } from './config.ts';
import { scrub, translatePgError } from './errors.ts';
import { migrate } from './migrations.ts';

/** Prepared once per connection under `name` (one name, one text): later runs skip parsing and planning. */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
}

/** What the repositories need: a pg Pool, a PostgresDatabase, or a test double. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string | NamedStatement, values?: unknown[]): Promise<QueryResult<R>>;
}

export interface Transactional extends Queryable {
  /** BEGIN, `work` on one connection, COMMIT; ROLLBACK when either rejects, the rejection passed on untranslated. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
}

/**
 * The relay's and the ledger's own pool, one transaction at a time each: they hold a transaction across a
 * broker round trip (rule EVT-7-delivery), and on the request pool they kept creates waiting.
 */
const BACKGROUND_POOL_SIZE = 2;

export class PostgresDatabase implements Component, Transactional {
  readonly name = 'database';
  readonly #config: PostgresConfig;
  readonly #logger: Logger;
  readonly #pool: pg.Pool;
  readonly #backgroundPool: pg.Pool;
  readonly background: Transactional;
  readonly #secrets: string[];
  readonly #target: string;
  #ended = false;

  constructor(config: PostgresConfig, logger: Logger) {
    this.#config = config;
    this.#logger = logger;
    this.#secrets = dsnSecrets(config.dsn);
    this.#target = describeDsn(config.dsn);
    this.#pool = this.#newPool(config.poolSize, 'orders');
    this.#backgroundPool = this.#newPool(BACKGROUND_POOL_SIZE, 'orders-background');
    this.background = {
      query: (text, values) => this.#run(this.#backgroundPool, text, values),
      transaction: (work) => this.#transaction(this.#backgroundPool, work),
    };
  }

  #newPool(max: number, applicationName: string): pg.Pool {
    // The schema goes into SQL: checked here, whoever built the config. SET, not the startup `options`: PGlite ignores those.
    const searchPath = this.#config.schema === undefined ? undefined : `SET search_path TO "${validSchemaName(this.#config.schema)}"`;
    const pool = new pg.Pool({
      connectionString: this.#config.dsn,
      max,
      connectionTimeoutMillis: this.#config.connectTimeoutMs,
      query_timeout: this.#config.queryTimeoutMs,
      keepAlive: true,
      application_name: applicationName,
      // Awaited by the pool before it hands a new client out; a failure fails that acquisition.
      onConnect: searchPath === undefined ? undefined : async (client) => void (await client.query(searchPath)),
    });
    // An idle client whose server went away emits here; unhandled, it would crash the process.
    pool.on('error', (error) => this.#logger.error({ error: this.#safe(error) }, 'database: idle connection lost'));
    return pool;
  }

  /** The request pool's connections right now, read at scrape time (orders_db_pool_* gauges). */
  poolStats(): { readonly total: number; readonly idle: number; readonly waiting: number } {
    return { total: this.#pool.totalCount, idle: this.#pool.idleCount, waiting: this.#pool.waitingCount };
  }

  async init(): Promise<void> {
    await this.migrate();
  }

  /** Applies pending migrations; returns the versions applied. Safe to run from several replicas at once. */
  async migrate(): Promise<string[]> {
    let client: PoolClient;
    try {
      client = checkedOut(await this.#pool.connect());
    } catch (error) {
      throw new ErrUnavailable(`database: cannot connect to POSTGRES_DSN (${this.#target}): ${this.#safe(error)}`);
    }
    try {
      const applied = await migrate(client, { schema: this.#config.schema });
      client.release();
      if (applied.length > 0) this.#logger.info({ applied }, 'database: migrations applied');
      return applied;
    } catch (error) {
      // Destroyed rather than returned: it may be mid-transaction or still hold the lock.
      client.release(true);
      throw translatePgError(error, `migrate (${this.#target})`, this.#secrets);
    }
  }

  query<R extends QueryResultRow = QueryResultRow>(text: string | NamedStatement, values?: unknown[]): Promise<QueryResult<R>> {
    return this.#run<R>(this.#pool, text, values);
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#transaction(this.#pool, work);
  }

  #run<R extends QueryResultRow>(pool: pg.Pool, text: string | NamedStatement, values?: unknown[]): Promise<QueryResult<R>> {
    if (typeof text === 'string') return pool.query<R>(text, values);
    return this.#config.preparedStatements === false ? pool.query<R>(text.text, text.values) : pool.query<R>(text);
  }

  async #transaction<T>(pool: pg.Pool, work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = checkedOut(await pool.connect());
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      // A connection whose ROLLBACK fails is in an unknown state: destroyed rather than pooled.
      const rolledBack = await client.query('ROLLBACK').then(
        () => true,
        () => false,
      );
      client.release(!rolledBack);
      throw error;
    }
  }

  /** Bounded by healthTimeoutMs, the wait for a pool connection included (a stalled server holds both). */
  async health(): Promise<void> {
    const probe = this.#pool.query('SELECT 1');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      const { healthTimeoutMs } = this.#config;
      timer = setTimeout(() => reject(new ErrUnavailable(`database: health check timed out after ${healthTimeoutMs} ms`)), healthTimeoutMs);
    });
    try {
      await Promise.race([probe, timeout]);
    } catch (error) {
      probe.catch(() => undefined); // a late rejection after the timeout must not go unhandled
      throw translatePgError(error, 'health', this.#secrets);
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    await Promise.all([this.#pool.end(), this.#backgroundPool.end()]);
  }

  #safe(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    return scrub(message === '' ? ((error as { code?: string }).code ?? 'unknown error') : message, this.#secrets);
  }
}

/**
 * pg-pool stops listening for a client's 'error' while it is checked out, and a connection that dies between
 * two queries emits one: unheard, it would crash the process. The next query fails and the caller destroys it.
 */
function checkedOut(client: PoolClient): PoolClient {
  const ignore = (): void => undefined;
  client.on('error', ignore);
  const release = client.release.bind(client);
  client.release = (destroy?: Error | boolean): void => {
    client.off('error', ignore);
    release(destroy);
  };
  return client;
}
