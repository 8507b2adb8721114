import { randomBytes } from 'node:crypto';
import { parseLogLevel, type LogLevel } from '../observability/logger.ts';
import { addressVar, ConfigError, durationVar, optionalVar, positiveIntVar, requireVar, type Env, type ListenAddress } from './env.ts';

/**
 * The service's configuration (spec 8.1), one typed section per component, built once at start-up.
 * Backend variables (POSTGRES_DSN, REDIS_ADDR, NATS_URL) are read by their adapters' own config
 * functions, only when real backends are wired.
 */
export interface ServiceConfig {
  /** LOG_LEVEL: debug, warn, error; anything else is info. */
  readonly logLevel: LogLevel;
  /** HTTP_ADDR: public listener, default :8080. */
  readonly httpAddr: ListenAddress;
  /** ADMIN_ADDR: admin listener (health, readiness, metrics), default :8081. */
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
  /** SESSION_RECENT: length of each user's recently viewed list, default 10. */
  readonly sessionRecent: number;
}

export function loadServiceConfig(env: Env, options: { embedded: boolean }): ServiceConfig {
  const generated = options.embedded && optionalVar(env, 'JWT_SECRET', '') === '';
  const otlpEndpoint = optionalVar(env, 'OTLP_ENDPOINT', '');
  return {
    logLevel: parseLogLevel(env['LOG_LEVEL']),
    httpAddr: addressVar(env, 'HTTP_ADDR', ':8080'),
    adminAddr: addressVar(env, 'ADMIN_ADDR', ':8081'),
    tokens: {
      secret: generated ? randomBytes(32).toString('base64url') : jwtSecret(env),
      expiryMs: durationVar(env, 'JWT_EXPIRY', '1h'),
      generated,
    },
    otlpEndpoint: otlpEndpoint.includes('://') ? invalid('OTLP_ENDPOINT must be host:port without a scheme') : otlpEndpoint,
    rateLimitRps: positiveIntVar(env, 'RATE_LIMIT_RPS', 50),
    sessionRecent: positiveIntVar(env, 'SESSION_RECENT', 10),
  };
}

/** HS256 wants a key of at least the hash size; checked here so start-up fails as a configuration error. */
const MIN_JWT_SECRET_BYTES = 32;

function jwtSecret(env: Env): string {
  const secret = requireVar(env, 'JWT_SECRET');
  if (Buffer.byteLength(secret, 'utf8') < MIN_JWT_SECRET_BYTES) invalid(`JWT_SECRET must be at least ${MIN_JWT_SECRET_BYTES} bytes`);
  return secret;
}

function invalid(message: string): never {
  throw new ConfigError(`config: ${message}`);
}
