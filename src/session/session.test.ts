import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Session } from './session.ts';

describe('Session (spec 2.2)', () => {
  it.each<[string, number, string[], string[]]>([
    ['starts empty', 10, [], []],
    // Most recent first, bounded, a re-view moved to the front without a duplicate: the recent-* conformance cases.
    ['a re-view of the id already first changes nothing but the count', 3, ['a', 'b', 'c', 'a', 'a'], ['a', 'c', 'b']],
    ['a re-viewed id keeps the others inside the bound (no eviction of a still-listed id)', 3, ['a', 'b', 'c', 'b'], ['b', 'c', 'a']],
    ['capacity 1 holds only the latest view', 1, ['a', 'b'], ['b']],
    ['an id the first one begins with, or that begins with it, is a different id', 3, ['ab', 'a', 'ab'], ['ab', 'a']],
    ['keeps ids exactly as given, the empty string and NUL included', 3, ['', 'a,b', ' x\u0000'], [' x\u0000', 'a,b', '']],
  ])('[SESSION-content, SESSION-bound] %s; every view counts', (_label, capacity, views, recent) => {
    const session = new Session(capacity);
    for (const id of views) session.recordView(id);
    expect(session.recent()).toEqual(recent);
    expect(session.snapshot()).toEqual({ views: views.length, recent });
  });

  it('recent() returns a copy the caller cannot use to change the session', () => {
    const session = new Session(3);
    session.recordView('a');
    const copy = session.recent();
    copy.push('x');
    copy[0] = 'y';
    expect(session.recent()).toEqual(['a']);
  });

  it('[SESSION-R4-flush-safe] a snapshot stays as it was taken while views keep coming', () => {
    const session = new Session(2);
    session.recordView('a');
    const taken = session.snapshot();
    session.recordView('b');
    session.recordView('c');
    expect(taken).toEqual({ views: 1, recent: ['a'] });
    expect(session.snapshot()).toEqual({ views: 3, recent: ['c', 'b'] });
  });

  // The messages say what is wrong to whoever builds a session badly: a scope's RangeError reaching a
  // request would be logged as a recovered panic with its message.
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('[SESSION-bound] rejects capacity %s, saying why', (capacity) => {
    expect(() => new Session(capacity)).toThrow(new RangeError('session: capacity must be a positive integer'));
  });

  it('[SESSION-content, SESSION-bound] any ids: the most recent distinct ones, newest first, at most the capacity (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.uuid(), fc.string({ unit: 'binary' })), { maxLength: 30 }),
        fc.integer({ min: 1, max: 12 }),
        (ids, capacity) => {
          const session = new Session(capacity);
          for (const one of ids) session.recordView(one);
          expect(session.recent()).toEqual([...new Set([...ids].reverse())].slice(0, capacity));
          expect(session.snapshot().views).toBe(ids.length);
        },
      ),
    );
  });
});
