/**
 * The shared rate-limit store (RATE_LIMIT_STORE=redis, rule LIMIT-rate-store): src/rate-limit/store.ts's token bucket run
 * atomically inside Redis, so every replica spends from one budget per client. An adapter of the rate-limit store port:
 * composition picks it, no transport imports it.
 */
import type { Redis } from 'ioredis';
import { closeRedisClient, createRedisClient } from './connection.ts';
import type { Component } from '../../lifecycle/component.ts';
import type { Logger } from '../../ports/logger.ts';
import { bucketDecision, type RateLimitDecision, type RateLimitStore } from '../../rate-limit/store.ts';

/**
 * The clock is the Redis server's (TIME), never a replica's, so replicas with skewed clocks agree; ARGV[3]
 * replaces it in tests only. State: a hash {tokens, at} that expires once the bucket would be full again.
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

/** `rate` tokens per second, `burst` tokens; `commandTimeoutMs` bounds each decision, which every REST request waits on. */
export interface RedisRateLimitOptions {
  readonly host: string;
  readonly port: number;
  readonly rate: number;
  readonly burst: number;
  /** Prepended to the client key; tests isolate themselves with their own. */
  readonly keyPrefix?: string;
  readonly commandTimeoutMs?: number;
  /** Tests only: a clock (ms) instead of Redis TIME. */
  readonly clock?: () => number;
}

type TakeReply = [string, string, string];
type ScriptedRedis = Redis & { orderRateLimitTake(key: string, rate: number, burst: number, now: string): Promise<TakeReply> };

/**
 * Its own connection, so a limiter command never queues behind cache traffic. It never holds start-up: if
 * Redis is unreachable at init, requests are limited per process (HttpRateLimiter) while it reconnects.
 */
export class RedisRateLimitStore implements RateLimitStore, Component {
  readonly name = 'rate-limit-store';
  readonly #options: RedisRateLimitOptions;
  readonly #logger: Logger;
  #client: ScriptedRedis | undefined;
  #running = false;

  constructor(options: RedisRateLimitOptions, logger: Logger) {
    this.#options = options;
    this.#logger = logger;
  }

  async init(): Promise<void> {
    this.#running = true;
    const client = createRedisClient(this.#options, {
      commandTimeoutMs: this.#options.commandTimeoutMs ?? 250,
      reconnect: () => this.#running,
    }) as ScriptedRedis;
    client.defineCommand('orderRateLimitTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    // Always listen: an unheard 'error' would crash the process. HttpRateLimiter logs the outage, once.
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
    if (this.#client === undefined) throw new Error('rate limit store: not initialised');
    const { rate, burst, clock, keyPrefix = DEFAULT_RATE_LIMIT_KEY_PREFIX } = this.#options;
    const now = clock === undefined ? '' : String(clock());
    const [allowed, tokens, at] = await this.#client.orderRateLimitTake(`${keyPrefix}${key}`, rate, burst, now);
    return bucketDecision(allowed === '1', Number(tokens), rate, burst, Number(at));
  }

  async stop(): Promise<void> {
    this.#running = false;
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await closeRedisClient(client);
  }
}
