import { Redis } from 'ioredis';
import { closeRedisClient } from '../adapters/redis/close-redis-client.ts';
import type { Component } from '../lifecycle/component.ts';
import type { Logger } from '../ports/logger.ts';
import { bucketDecision, type RateLimitDecision, type RateLimitStore } from './rate-limit-store.ts';
import { reconnectDelayMs } from '../adapters/redis/redis-order-cache.ts';

/**
 * The token bucket of TokenBucketLimiter (rate-limit/token-bucket-limiter.ts), run atomically inside
 * Redis so every replica spends from one budget per client (RATE_LIMIT_STORE=redis). The clock is the
 * Redis server's (TIME), never a replica's, so replicas with skewed clocks agree; ARGV[3] replaces it
 * in tests only. State: a hash {tokens, at} that expires once the bucket would be full again.
 * Returns {allowed, tokens left, now in ms} as strings (Lua numbers would be truncated to integers).
 */
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now
if ARGV[3] ~= '' then
  now = tonumber(ARGV[3])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'at', string.format('%.3f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return {tostring(allowed), string.format('%.6f', tokens), string.format('%.3f', now)}
`;

export const DEFAULT_RATE_LIMIT_KEY_PREFIX = 'orders:ratelimit:';

export interface RedisRateLimitOptions {
  readonly host: string;
  readonly port: number;
  /** RATE_LIMIT_RPS: tokens per second. */
  readonly rate: number;
  /** Bucket size; RATE_LIMIT_RPS by our choice. */
  readonly burst: number;
  /** Prepended to the client key; tests isolate themselves with their own. */
  readonly keyPrefix?: string;
  /**
   * Bound on one decision: beyond it the request is decided locally (HttpRateLimiter). Every REST
   * request waits on it, so it is short; a stalled Redis costs each request at most this much.
   */
  readonly commandTimeoutMs?: number;
  /** Tests only: a clock (ms) instead of Redis TIME. */
  readonly clock?: () => number;
}

type TakeReply = [string, string, string];
type ScriptedRedis = Redis & { orderRateLimitTake(key: string, rate: number, burst: number, now: string): Promise<TakeReply> };

/**
 * The shared rate-limit store on Redis (ioredis): its own connection, so a limiter command never queues
 * behind cache traffic. It never holds start-up: if Redis is unreachable at init, requests are limited
 * per process (HttpRateLimiter's fallback) while the client keeps reconnecting; commands fail at once
 * while disconnected (no offline queue) and after commandTimeoutMs otherwise.
 */
export class RedisRateLimitStore implements RateLimitStore, Component {
  readonly name = 'rate-limit-store';
  readonly #options: RedisRateLimitOptions;
  readonly #logger: Logger;
  readonly #prefix: string;
  #client: ScriptedRedis | undefined;
  #running = false;

  constructor(options: RedisRateLimitOptions, logger: Logger) {
    if (!(options.rate > 0) || !(options.burst >= 1)) throw new RangeError('rate limit store: rate and burst must be positive');
    this.#options = options;
    this.#logger = logger;
    this.#prefix = options.keyPrefix ?? DEFAULT_RATE_LIMIT_KEY_PREFIX;
  }

  async init(): Promise<void> {
    if (this.#client !== undefined) throw new Error('rate limit store: init called twice');
    this.#running = true;
    const client = new Redis({
      host: this.#options.host,
      port: this.#options.port,
      lazyConnect: true,
      enableOfflineQueue: false,
      commandTimeout: this.#options.commandTimeoutMs ?? 250,
      connectTimeout: 2_000,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => (this.#running ? reconnectDelayMs(attempt) : null),
    }) as ScriptedRedis;
    client.defineCommand('orderRateLimitTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    // Always listen: an 'error' event without a listener would crash the process. HttpRateLimiter
    // logs the outage as the requests see it, once.
    client.on('error', () => undefined);
    this.#client = client;
    try {
      await client.connect();
    } catch (err) {
      this.#logger.warn(
        { component: this.name, error: err instanceof Error ? err.message : String(err) },
        'rate limit: cannot reach REDIS_ADDR at start-up; limiting per process until it answers',
      );
    }
  }

  async take(key: string): Promise<RateLimitDecision> {
    const client = this.#client;
    if (client === undefined) throw new Error('rate limit store: not initialised');
    const { rate, burst, clock } = this.#options;
    const [allowed, tokens, now] = await client.orderRateLimitTake(
      `${this.#prefix}${key}`,
      rate,
      burst,
      clock === undefined ? '' : String(clock()),
    );
    return bucketDecision(allowed === '1', Number(tokens), rate, burst, Number(now));
  }

  async stop(): Promise<void> {
    this.#running = false;
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await closeRedisClient(client);
  }
}
