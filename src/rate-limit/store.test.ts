// The in-process token bucket (rule LIMIT-rate-keying): refill, burst, headers' arithmetic, pruning.
import { describe, expect, it } from 'vitest';
import { TokenBucketLimiter } from './store.ts';

/** A clock the test moves by hand, in milliseconds. */
function manualClock(start = 1_000): { now: () => number; advance: (ms: number) => void } {
  let current = start;
  return { now: () => current, advance: (ms) => (current += ms) };
}

describe('TokenBucketLimiter', () => {
  it('allows a burst of `burst` requests, counting down remaining, then refuses', () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter(5, 5, clock.now);
    const remaining = [];
    for (let i = 0; i < 5; i++) {
      const decision = limiter.take('client');
      expect(decision.allowed).toBe(true);
      remaining.push(decision.remaining);
    }
    expect(remaining).toStrictEqual([4, 3, 2, 1, 0]);
    expect(limiter.take('client')).toStrictEqual({
      allowed: false,
      limit: 5,
      retryAfterSeconds: 1,
      remaining: 0,
      resetSeconds: 1,
      atMs: 1_000,
    });
  });

  it('burst defaults to the rate', () => {
    const limiter = new TokenBucketLimiter(3, undefined, manualClock().now);
    expect([1, 2, 3, 4].map(() => limiter.take('k').allowed)).toStrictEqual([true, true, true, false]);
  });

  it('refills at `rate` tokens per second, never beyond the burst', () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter(5, 5, clock.now);
    for (let i = 0; i < 5; i++) limiter.take('client');
    clock.advance(199);
    expect(limiter.take('client').allowed).toBe(false);
    clock.advance(1); // 200 ms at 5/s: one token
    expect(limiter.take('client').allowed).toBe(true);
    expect(limiter.take('client').allowed).toBe(false);
    clock.advance(60_000);
    const afterIdle = [1, 2, 3, 4, 5, 6].map(() => limiter.take('client').allowed);
    expect(afterIdle).toStrictEqual([true, true, true, true, true, false]);
  });

  it('Retry-After is the whole seconds until the next token, at least 1', () => {
    const clock = manualClock();
    const slow = new TokenBucketLimiter(0.5, 1, clock.now); // one token every 2 s
    slow.take('k');
    expect(slow.take('k').retryAfterSeconds).toBe(2);
    clock.advance(1_500);
    expect(slow.take('k').retryAfterSeconds).toBe(1);
    const fractional = new TokenBucketLimiter(0.4, 1, clock.now); // 2.5 s per token: rounds up
    fractional.take('k');
    expect(fractional.take('k').retryAfterSeconds).toBe(3);
    const fast = new TokenBucketLimiter(1000, 1, clock.now);
    fast.take('k');
    expect(fast.take('k').retryAfterSeconds).toBe(1);
  });

  it('pruning keeps memory bounded under a steady stream of new clients', () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter(10, 10, clock.now); // a used bucket is full again after 100 ms
    let largest = 0;
    for (let i = 0; i < 50_000; i++) {
      clock.advance(1);
      limiter.take(`client-${i}`);
      largest = Math.max(largest, limiter.size);
    }
    expect(largest).toBeLessThanOrEqual(10_001);
  });

  it('forgets clients whose bucket has refilled once many clients were seen', () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter(10, 10, clock.now);
    for (let i = 0; i < 12_000; i++) limiter.take(`burst-${i}`);
    expect(limiter.size).toBe(12_000); // all still in use: none may be forgotten yet
    clock.advance(1_000);
    for (let i = 0; i < 12_000; i++) limiter.take(`later-${i}`);
    expect(limiter.size).toBeLessThan(12_000 + 1_000);
  });

  it('many new clients at one instant are all kept (none is in use long enough to be forgotten)', () => {
    // Amortised pruning: a scan per new key past 10,000 took ~7 s here, which vitest's timeout catches.
    const limiter = new TokenBucketLimiter(10, 10, manualClock().now);
    for (let i = 0; i < 40_000; i++) limiter.take(`client-${i}`);
    expect(limiter.size).toBe(40_000);
  });

  it('RateLimit-Reset counts whole seconds until the bucket is full again, a delta, never an epoch', () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter(2, 6, clock.now); // 3 s to refill from empty
    expect(limiter.take('k').resetSeconds).toBe(1); // 0.5 s missing: rounds up
    for (let i = 0; i < 5; i++) limiter.take('k');
    expect(limiter.take('k')).toMatchObject({ allowed: false, resetSeconds: 3, retryAfterSeconds: 1 });
    clock.advance(2_000);
    expect(limiter.take('k')).toMatchObject({ allowed: true, remaining: 3, resetSeconds: 2 });
  });

  it('[LIMIT-rate-keying] pruning never forgets a client still short of tokens: an emptied bucket keeps refusing', () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter(10, 10, clock.now);
    for (let i = 0; i < 10; i++) limiter.take('hot');
    for (let i = 0; i < 9_999; i++) limiter.take(`client-${i}`); // 10,000 buckets: the next new key prunes
    clock.advance(1); // 0.01 token back for hot, nobody full again
    limiter.take('new');
    expect(limiter.size).toBe(10_001);
    expect(limiter.take('hot').allowed).toBe(false);
  });

  it('[LIMIT-rate-keying] only a new key prunes: a returning client leaves the other buckets alone', () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter(10, 10, clock.now);
    for (let i = 0; i < 10_000; i++) limiter.take(`client-${i}`); // 10,000 buckets: the next new key prunes
    clock.advance(100); // every bucket full again, all prunable
    expect(limiter.take('client-0')).toMatchObject({ allowed: true, remaining: 9 });
    expect(limiter.size).toBe(10_000);
  });

  it('[LIMIT-rate-keying] pruning drops the buckets that are exactly full again', () => {
    const clock = manualClock();
    const limiter = new TokenBucketLimiter(10, 10, clock.now);
    for (let i = 0; i < 10_000; i++) limiter.take(`client-${i}`); // each 9 tokens left
    clock.advance(100); // 100 ms at 10/s: exactly 10 again
    limiter.take('new');
    expect(limiter.size).toBe(1);
  });
});
