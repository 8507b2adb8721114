import pg from 'pg';
import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
import { ErrUnavailable } from '../../domain/errors.ts';
import type { Component } from '../../lifecycle/component.ts';
import type { Logger } from '../../ports/logger.ts';
import { migrate } from './migrations.ts';
import { scrub, translatePgError } from './pg-errors.ts';
import { BACKGROUND_POOL_SIZE, describeDsn, dsnSecrets, validSchemaName, type PostgresConfig } from './postgres-config.ts';

/**
 * A statement the hot paths run on every request, prepared once per connection under `name`: each later
 * execution skips parsing and, once Postgres settles on a generic plan, planning (measured in
 * bench/list-query.ts). One name always carries the same text.
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
}

/** What the repositories need: a pg Pool, a PostgresDatabase, or a test double. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string | NamedStatement, values?: unknown[]): Promise<QueryResult<R>>;
}

/** A Queryable that can also run work in one transaction on one connection. */
export interface Transactional extends Queryable {
  /**
   * BEGIN, `work` on one connection, COMMIT; ROLLBACK when `work` (or the COMMIT) rejects, and the
   * rejection is passed on untranslated (callers translate at their own boundary).
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
}

/**
 * The relational database component (spec 2.3 health node `database`). Owns the pg Pool; the
 * repositories borrow it through `query`.
 */
export class PostgresDatabase implements Component, Transactional {
  readonly name = 'database';
  readonly #config: PostgresConfig;
  readonly #logger: Logger;
  readonly #pool: pg.Pool;
  /** Background work's own connections (PostgresConfig.backgroundPoolSize), opened on first use. */
  readonly #backgroundPool: pg.Pool;
  /** The background pool as a Transactional: the outbox relay's and the notifier ledger's database. */
  readonly background: Transactional;
  readonly #secrets: string[];
  readonly #target: string;
  /** Each new connection's first statement when a schema is configured (SET, not the startup `options`: PGlite ignores those). */
  readonly #searchPath: string | undefined;
  #ended = false;

  constructor(config: PostgresConfig, logger: Logger) {
    // The schema goes into SQL: checked before anything else, whoever built the config.
    this.#searchPath = config.schema === undefined ? undefined : `SET search_path TO "${validSchemaName(config.schema)}"`;
    this.#config = config;
    this.#logger = logger;
    this.#secrets = dsnSecrets(config.dsn);
    this.#target = describeDsn(config.dsn);
    this.#pool = this.#newPool(config.poolSize, 'orders');
    this.#backgroundPool = this.#newPool(config.backgroundPoolSize ?? BACKGROUND_POOL_SIZE, 'orders-background');
    this.background = {
      query: (text, values) => this.#run(this.#backgroundPool, text, values),
      transaction: (work) => this.#transaction(this.#backgroundPool, work),
    };
  }

  #newPool(max: number, applicationName: string): pg.Pool {
    const searchPath = this.#searchPath;
    const pool = new pg.Pool({
      connectionString: this.#config.dsn,
      max,
      connectionTimeoutMillis: this.#config.connectTimeoutMs,
      query_timeout: this.#config.queryTimeoutMs,
      keepAlive: true,
      application_name: applicationName,
      // Awaited by the pool before it hands a new client out; a failure fails that acquisition.
      onConnect:
        searchPath === undefined
          ? undefined
          : async (client) => {
              await client.query(searchPath);
            },
    });
    // An idle client whose server went away emits here; unhandled, it would crash the process.
    pool.on('error', (error) => {
      this.#logger.error({ error: this.#safe(error) }, 'database: idle connection lost');
    });
    return pool;
  }

  /** The pool's connections right now (observability/backend-metrics.ts), read at scrape time. */
  poolStats(): { readonly total: number; readonly idle: number; readonly waiting: number } {
    return { total: this.#pool.totalCount, idle: this.#pool.idleCount, waiting: this.#pool.waitingCount };
  }

  /** Spec 3.4 rule 2: one connection attempt, bounded by connectTimeoutMs, no retry; then migrate. */
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
    return this.#migrateOn(client);
  }

  async #migrateOn(client: PoolClient): Promise<string[]> {
    try {
      const applied = await migrate(client, { schema: this.#config.schema });
      client.release();
      if (applied.length > 0) this.#logger.info({ applied }, 'database: migrations applied');
      return applied;
    } catch (error) {
      // Destroy rather than return the connection: it may be mid-transaction or still hold the lock.
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
      // A connection whose ROLLBACK fails is in an unknown state: destroy it rather than pool it.
      const rolledBack = await client.query('ROLLBACK').then(
        () => true,
        () => false,
      );
      client.release(!rolledBack);
      throw error;
    }
  }

  async health(): Promise<void> {
    const probe = this.#pool.query('SELECT 1');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ErrUnavailable(`database: health check timed out after ${this.#config.healthTimeoutMs} ms`)),
        this.#config.healthTimeoutMs,
      );
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
 * pg-pool stops listening for a client's 'error' while it is checked out, and a connection that dies
 * between two queries (Postgres stopped while the relay awaits the broker inside its transaction) emits
 * one: unheard, it would crash the process (spec 3.4: an outage never does). The next query on it fails
 * and the caller destroys it, so the event itself needs no handling; the listener goes with the release.
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
