/** The database's settings (spec 8.1: each component reads its own variables), and the DSN's safe forms for messages. */
import { ConfigError, optionalVar, readAll, requireVar, type Env } from '../../config/env.ts';

export interface PostgresConfig {
  /** POSTGRES_DSN (required): a `postgres://` URL. Holds the password, so never log it; use describeDsn. */
  readonly dsn: string;
  /** POSTGRES_SCHEMA (optional, not in spec 8.1): a schema of their own, for tests and the CLI on a shared server. */
  readonly schema: string | undefined;
  /** Bound on opening one connection (init and every new pool client); init does not retry (spec 3.4 rule 2). */
  readonly connectTimeoutMs: number;
  /** Bound on one health probe. */
  readonly healthTimeoutMs: number;
  /** Client-side bound on one request query, so a hung server cannot hold a request forever. */
  readonly queryTimeoutMs: number;
  readonly poolSize: number;
  /** Off sends NamedStatements unnamed: for connections sharing one session (PGlite behind pglite-socket). */
  readonly preparedStatements?: boolean;
}

export const POSTGRES_DEFAULTS = {
  connectTimeoutMs: 5_000,
  healthTimeoutMs: 2_000,
  queryTimeoutMs: 10_000,
  poolSize: 10,
} as const;

/** A plain lowercase identifier: the schema name is spliced into SQL, so nothing that needs quoting. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function postgresConfigFromEnv(env: Env): PostgresConfig {
  const schemaText = optionalVar(env, 'POSTGRES_SCHEMA', '');
  return {
    ...readAll({ dsn: () => postgresDsn(env), schema: () => (schemaText === '' ? undefined : validSchemaName(schemaText)) }),
    ...POSTGRES_DEFAULTS,
  };
}

/**
 * A `postgres://` (or `postgresql://`) URL, checked here: pg takes any text as a connection string, and
 * `localhost` alone became a database on a host named `base` (getaddrinfo ENOTFOUND base) at connect time.
 */
function postgresDsn(env: Env): string {
  const dsn = requireVar(env, 'POSTGRES_DSN');
  if (!/^postgres(?:ql)?:\/\//i.test(dsn) || URL.parse(dsn) === null) {
    throw new ConfigError('POSTGRES_DSN must be a URL such as postgres://user@host:5432/db');
  }
  return dsn;
}

export function validSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new ConfigError('POSTGRES_SCHEMA must be a lowercase identifier (a-z, 0-9, _; at most 63 characters)');
  }
  return schema;
}

/** `host:port/database` only: what an operator needs to recognise the target, and never the password. */
export function describeDsn(dsn: string): string {
  const url = URL.parse(dsn);
  if (url === null) return '(unparseable DSN)';
  const host = url.hostname === '' ? 'localhost' : url.hostname;
  const port = url.port === '' ? '5432' : url.port;
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  return `${host}:${port}/${database}`;
}

/** The password in every form it may appear in a message, for scrubbing. */
export function dsnSecrets(dsn: string): string[] {
  try {
    const url = new URL(dsn);
    if (url.password === '') return [];
    return [...new Set([url.password, decodeURIComponent(url.password), dsn])];
  } catch {
    return [dsn];
  }
}
