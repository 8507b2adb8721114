/**
 * REDIS_ADDR (spec 8.1) and the ioredis client shared by both Redis stores, the order cache (rule
 * SVC-cache-aside) and the shared rate-limit store (rule LIMIT-rate-store): no offline queue, so while
 * disconnected a command fails at once and its caller falls back (to the database, to the process's own
 * bucket) while the client reconnects in the background.
 */
import { Redis } from 'ioredis';
import { ConfigError, requireVar, type Env } from '../../config/env.ts';

export interface RedisConfig {
  /** REDIS_ADDR host part: a name, an IPv4 address or a bracket-less IPv6 address. */
  readonly host: string;
  readonly port: number;
  /** Lifetime of a cached order: a constant, spec 8.1 lists no variable for it (rule SVC-cache-ttl). */
  readonly ttlSeconds: number;
  /** Prepended to the order id to form the key; tests override it to isolate themselves. */
  readonly keyPrefix: string;
}

export const DEFAULT_CACHE_TTL_SECONDS = 5 * 60;
export const DEFAULT_KEY_PREFIX = 'orders:order:';

/** REDIS_ADDR is required and is host:port with no scheme; the value is never echoed (rule CONFIG-no-secret-echo). */
export function redisConfigFromEnv(env: Env): RedisConfig {
  const addr = requireVar(env, 'REDIS_ADDR');
  if (addr.includes('://')) {
    throw new ConfigError('REDIS_ADDR must be host:port without a scheme (for example 127.0.0.1:6379, not redis://...)');
  }
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(addr);
  const port = match ? Number(match[3]) : NaN;
  const host = match?.[1] ?? match?.[2];
  if (!(port >= 1 && port <= 65_535) || host === undefined) {
    throw new ConfigError('REDIS_ADDR must be host:port (for example 127.0.0.1:6379)');
  }
  return { host, port, ttlSeconds: DEFAULT_CACHE_TTL_SECONDS, keyPrefix: DEFAULT_KEY_PREFIX };
}

/** Reconnect backoff: 100 ms, 200 ms, ... capped at 1 s, so a recovery is noticed within a second. */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(attempt * 100, 1_000);
}

/**
 * A client that connects on connect() and never queues a command while disconnected. `reconnect` is asked
 * before each reconnect attempt: false ends the client (no retry during a failing init, none after stop).
 */
export function createRedisClient(
  { host, port }: Pick<RedisConfig, 'host' | 'port'>,
  options: { commandTimeoutMs: number; connectTimeoutMs?: number | undefined; reconnect: () => boolean; autoPipelining?: boolean },
): Redis {
  return new Redis({
    host,
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    enableAutoPipelining: options.autoPipelining ?? false,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => (options.reconnect() ? reconnectDelayMs(attempt) : null),
  });
}

/** QUIT when connected (in-flight replies still arrive), else drop the socket; a failed QUIT drops it too. */
export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // A failed QUIT still has to release the socket.
    }
  }
  client.disconnect();
}
