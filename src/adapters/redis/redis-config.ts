import { ConfigError, requireVar, type Env } from '../../config/env.ts';

/** Cache settings (spec 8.1). Only REDIS_ADDR comes from the environment; the rest are fixed constants. */
export interface RedisConfig {
  /** REDIS_ADDR host part: a name, an IPv4 address or a bracket-less IPv6 address. */
  readonly host: string;
  readonly port: number;
  /** Lifetime of a cached order. A constant, not configuration (spec 8.1 lists no such variable). */
  readonly ttlSeconds: number;
  /** Prepended to the order id to form the key; tests override it to isolate themselves. */
  readonly keyPrefix: string;
}

export const DEFAULT_CACHE_TTL_SECONDS = 5 * 60;
export const DEFAULT_KEY_PREFIX = 'orders:order:';

/** Spec 8.1: REDIS_ADDR is required and is host:port with no scheme. The value is never echoed. */
export function redisConfigFromEnv(env: Env): RedisConfig {
  const addr = requireVar(env, 'REDIS_ADDR');
  if (addr.includes('://')) {
    throw new ConfigError('config: REDIS_ADDR must be host:port without a scheme (for example 127.0.0.1:6379, not redis://...)');
  }
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(addr);
  const port = match ? Number(match[3]) : NaN;
  const host = match?.[1] ?? match?.[2];
  if (!(port >= 1 && port <= 65_535) || host === undefined) {
    throw new ConfigError('config: REDIS_ADDR must be host:port (for example 127.0.0.1:6379)');
  }
  return { host, port, ttlSeconds: DEFAULT_CACHE_TTL_SECONDS, keyPrefix: DEFAULT_KEY_PREFIX };
}
