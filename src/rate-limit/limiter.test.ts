// HttpRateLimiter (rule LIMIT-rate-store): which store decides, the fallback, its logs and the decision channel.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { LogCapture } from '../../test/support/log-capture.ts';
import { createLogger } from '../observability/logger.ts';
import { ClientAddressResolver } from './client-address.ts';
import { HttpRateLimiter, RATE_LIMIT_CHANNEL, type RateLimitEvent } from './limiter.ts';
import { bucketDecision, TokenBucketLimiter, type RateLimitStore } from './store.ts';

const REQUEST = { peer: '198.51.100.7', forwardedFor: undefined };

/** A shared store whose next answers the test scripts: a decision (remaining tokens) or a failure. */
function scriptedStore(): { store: RateLimitStore; answers: Array<number | Error> } {
  const answers: Array<number | Error> = [];
  const store: RateLimitStore = {
    take: async () => {
      const next = answers.shift();
      if (next === undefined) throw new Error('script ran out');
      if (next instanceof Error) throw next;
      return bucketDecision(true, next, 100, 100, 0);
    },
  };
  return { store, answers };
}

function limiter(shared: RateLimitStore | undefined) {
  const logs = new LogCapture();
  const local = new TokenBucketLimiter(3, 3, () => 0); // a stopped clock: 3 requests, then none
  const http = new HttpRateLimiter({ resolver: new ClientAddressResolver([]), local, shared, logger: createLogger('debug', logs) });
  return { http, logs };
}

let listener: ((message: unknown) => void) | undefined;
afterEach(() => {
  if (listener !== undefined) unsubscribe(RATE_LIMIT_CHANNEL, listener);
  listener = undefined;
});
function events(): RateLimitEvent[] {
  const seen: RateLimitEvent[] = [];
  listener = (message) => void seen.push(message as RateLimitEvent);
  subscribe(RATE_LIMIT_CHANNEL, listener);
  return seen;
}

describe('HttpRateLimiter (rule LIMIT-rate-store)', () => {
  it('[LIMIT-rate-store] the shared store decides while it answers; each decision is published with its key and source', async () => {
    const { store, answers } = scriptedStore();
    const { http } = limiter(store);
    const seen = events();
    answers.push(42);
    const decision = await http.take(REQUEST);
    expect(decision.remaining).toBe(42);
    expect(seen).toEqual([{ key: '198.51.100.7', decision, source: 'shared' }]);
  });

  it('decisions are published on the diagnostics channel named orders:rate-limit:decision', async () => {
    const { http } = limiter(undefined);
    const seen: unknown[] = [];
    const byName = (message: unknown): void => void seen.push(message);
    subscribe('orders:rate-limit:decision', byName);
    try {
      const decision = await http.take(REQUEST);
      expect(seen).toEqual([{ key: '198.51.100.7', decision, source: 'local' }]);
    } finally {
      unsubscribe('orders:rate-limit:decision', byName);
    }
  });

  it('[LIMIT-rate-store] with no shared store the process bucket decides (source local)', async () => {
    const { http } = limiter(undefined);
    const seen = events();
    const remaining = [];
    for (let i = 0; i < 4; i++) remaining.push((await http.take(REQUEST)).remaining);
    expect(remaining).toEqual([2, 1, 0, 0]);
    expect(seen.map((e) => e.source)).toEqual(['local', 'local', 'local', 'local']);
  });

  it('[LIMIT-rate-store] a failing shared store falls back to the process bucket (neither open nor closed); the outage and the recovery are logged once each', async () => {
    const { store, answers } = scriptedStore();
    const { http, logs } = limiter(store);
    const seen = events();
    answers.push(50, 51, new Error('redis down'), new Error('still down'), new Error('still down'), new Error('still down'), 60, 61);
    const remaining = [];
    for (let i = 0; i < 8; i++) remaining.push((await http.take(REQUEST)).remaining);
    // Failures 3 to 6 spend the process bucket's 3 tokens, the fourth is refused by it.
    expect(remaining).toEqual([50, 51, 2, 1, 0, 0, 60, 61]);
    expect(seen.map((e) => e.source)).toEqual(['shared', 'shared', 'local', 'local', 'local', 'local', 'shared', 'shared']);
    expect(seen[5]?.decision.allowed).toBe(false);
    expect(logs.lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'rate limit: shared store unavailable, limiting per process'],
      ['info', 'rate limit: shared store answers again'],
    ]);
    expect(logs.lines[0]?.['err']).toBe('redis down');
  });

  it('[LIMIT-rate-store] a second outage is logged again, after its recovery', async () => {
    const { store, answers } = scriptedStore();
    const { http, logs } = limiter(store);
    answers.push(new Error('first'), 1, new Error('second'), 2);
    for (let i = 0; i < 4; i++) await http.take(REQUEST);
    expect(logs.lines.map((l) => [l.msg, l['err']])).toEqual([
      ['rate limit: shared store unavailable, limiting per process', 'first'],
      ['rate limit: shared store answers again', undefined],
      ['rate limit: shared store unavailable, limiting per process', 'second'],
      ['rate limit: shared store answers again', undefined],
    ]);
  });
});
