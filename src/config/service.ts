/**
 * The service's own configuration (spec 8.1), one typed section per component, read once at start-up.
 * Backend variables (POSTGRES_DSN, REDIS_ADDR, NATS_URL) are read by their adapters, only when real backends
 * are wired (rule CONFIG-own-vars); defaults are rule CONFIG-defaults.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseLogLevel, type LogLevel } from '../observability/logger.ts';
import { addressVar, ConfigError, durationVar, optionalVar, positiveIntVar, readAll, requireVar, trustProxyVar } from './env.ts';
import type { Env, ListenAddress, TrustedNetwork } from './env.ts';

const RATE_LIMIT_STORES = ['memory', 'redis'] as const;
export type RateLimitStoreKind = (typeof RATE_LIMIT_STORES)[number];

export interface ServiceConfig {
  /** LOG_LEVEL: debug, warn, error; anything else is info. */
  readonly logLevel: LogLevel;
  /** HTTP_ADDR: public listener, default :8080. */
  readonly httpAddr: ListenAddress;
  /** ADMIN_ADDR: admin listener, default 127.0.0.1:8081, loopback: it names components (rule LIMIT-listen-defaults). */
  readonly adminAddr: ListenAddress;
  readonly tokens: {
    /** JWT_SECRET: HS256 signing secret, required, at least 32 bytes. */
    readonly secret: string;
    /** JWT_EXPIRY: token lifetime as a duration (30m, 2h), default 1h. */
    readonly expiryMs: number;
    /** True when the secret was generated because embedded mode had none. */
    readonly generated: boolean;
  };
  /** OTLP_ENDPOINT: host:port for OTLP/HTTP trace export; empty = spans are not exported. */
  readonly otlpEndpoint: string;
  /** RATE_LIMIT_RPS: REST requests per second per client, default 50. */
  readonly rateLimitRps: number;
  /** RATE_LIMIT_STORE: `memory` (default, a budget per process) or `redis` (shared by replicas, rule LIMIT-rate-store). */
  readonly rateLimitStore: RateLimitStoreKind;
  /** TRUST_PROXY: networks of proxies whose X-Forwarded-For names the client; empty (default) = none. */
  readonly trustProxy: readonly TrustedNetwork[];
  /** SESSION_RECENT: length of each user's recently viewed list, default 10. */
  readonly sessionRecent: number;
  /** HTTP_MAX_CONNECTIONS (not in the spec, rule LIMIT-connections): connections the public listener holds at once. */
  readonly maxConnections: number;
  /** TLS_CERT_FILE and TLS_KEY_FILE (not in the spec, rule ONEPORT-tls): PEM files; both set, the one-port listener speaks TLS. */
  readonly tls: { readonly cert: Buffer; readonly key: Buffer } | undefined;
}

/**
 * Rule LIMIT-connections: a hostile HTTP/2 connection holds ~1 MB, so the cap bounds memory; 256 was too few
 * for the conformance suite against the image, and a 512 MiB pod facing hostile clients sets 256.
 */
const DEFAULT_MAX_CONNECTIONS = 1024;

export function loadServiceConfig(env: Env, options: { embedded: boolean }): ServiceConfig {
  const generated = options.embedded && optionalVar(env, 'JWT_SECRET', '') === '';
  // Every variable is read, and every problem reported in one ConfigError (rule CONFIG-all-at-once).
  return readAll<ServiceConfig>({
    logLevel: () => parseLogLevel(env['LOG_LEVEL']),
    httpAddr: () => addressVar(env, 'HTTP_ADDR', ':8080'),
    adminAddr: () => addressVar(env, 'ADMIN_ADDR', '127.0.0.1:8081'),
    tokens: () =>
      readAll<ServiceConfig['tokens']>({
        secret: () => (generated ? randomBytes(32).toString('base64url') : jwtSecret(env)),
        expiryMs: () => durationVar(env, 'JWT_EXPIRY', '1h'),
        generated: () => generated,
      }),
    otlpEndpoint: () => otlpEndpoint(env),
    rateLimitRps: () => positiveIntVar(env, 'RATE_LIMIT_RPS', 50),
    rateLimitStore: () => rateLimitStore(env, options.embedded),
    trustProxy: () => trustProxyVar(env),
    sessionRecent: () => positiveIntVar(env, 'SESSION_RECENT', 10),
    maxConnections: () => positiveIntVar(env, 'HTTP_MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS),
    tls: () => tlsFiles(env),
  });
}

function otlpEndpoint(env: Env): string {
  const endpoint = optionalVar(env, 'OTLP_ENDPOINT', '');
  return endpoint.includes('://') ? invalid('OTLP_ENDPOINT must be host:port without a scheme') : endpoint;
}

function tlsFiles(env: Env): ServiceConfig['tls'] {
  const certFile = optionalVar(env, 'TLS_CERT_FILE', '');
  const keyFile = optionalVar(env, 'TLS_KEY_FILE', '');
  if (certFile === '' && keyFile === '') return undefined;
  if (certFile === '' || keyFile === '') invalid('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  const read = (name: string, path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (error) {
      // The path and the reason, never the content.
      return invalid(`${name}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  return readAll({ cert: () => read('TLS_CERT_FILE', certFile), key: () => read('TLS_KEY_FILE', keyFile) });
}

/** HS256 wants a key of at least the hash size; checked here so start-up fails as a configuration error. */
const MIN_JWT_SECRET_BYTES = 32;

function jwtSecret(env: Env): string {
  const secret = requireVar(env, 'JWT_SECRET');
  if (Buffer.byteLength(secret, 'utf8') < MIN_JWT_SECRET_BYTES) invalid(`JWT_SECRET must be at least ${MIN_JWT_SECRET_BYTES} bytes`);
  return secret;
}

function rateLimitStore(env: Env, embedded: boolean): RateLimitStoreKind {
  const value = optionalVar(env, 'RATE_LIMIT_STORE', 'memory');
  const store =
    RATE_LIMIT_STORES.find((name) => name === value) ?? invalid(`RATE_LIMIT_STORE must be one of ${RATE_LIMIT_STORES.join(', ')}`);
  // --embedded has no Redis to share a budget through; silently limiting per process would hide that.
  if (store === 'redis' && embedded) invalid('RATE_LIMIT_STORE=redis needs real backends (REDIS_ADDR), not --embedded');
  return store;
}

function invalid(message: string): never {
  throw new ConfigError(message);
}
