import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packedUuids } from './packed-uuids.ts';
import { plainIds, Session, type RecentIdsCodec } from './session.ts';

// Both ways to hold the ids: as they are, and packed (the one composition chooses).
describe.each<[string, RecentIdsCodec]>([
  ['ids as they are', plainIds],
  ['ids packed', packedUuids],
])('Session (spec 2.2), %s', (_codec, codec) => {
  it.each<[string, number, string[], string[]]>([
    ['starts empty', 10, [], []],
    // Most recent first, bounded, a re-view moved to the front without a duplicate: the recent-* conformance cases.
    ['a re-view of the id already first changes nothing but the count', 3, ['a', 'b', 'c', 'a', 'a'], ['a', 'c', 'b']],
    ['a re-viewed id keeps the others inside the bound (no eviction of a still-listed id)', 3, ['a', 'b', 'c', 'b'], ['b', 'c', 'a']],
    ['capacity 1 holds only the latest view', 1, ['a', 'b'], ['b']],
    // The first entry is compared whole, never as a prefix of the viewed id or the other way round.
    ['an id the first one begins with, or that begins with it, is a different id', 3, ['ab', 'a', 'ab'], ['ab', 'a']],
    ['keeps ids exactly as given, the empty string included', 3, ['', 'a,b', ' x '], [' x ', 'a,b', '']],
  ])('%s; every view counts', (_label, capacity, views, recent) => {
    const session = new Session(capacity, codec);
    for (const id of views) session.recordView(id);
    expect(session.recent()).toEqual(recent);
    expect(session.snapshot()).toEqual({ views: views.length, recent });
  });

  it('recent() returns a copy the caller cannot use to change the session', () => {
    const session = new Session(3, codec);
    session.recordView('a');
    const copy = session.recent();
    copy.push('x');
    copy[0] = 'y';
    expect(session.recent()).toEqual(['a']);
  });

  // The messages say what is wrong to whoever builds a session badly: a scope's RangeError reaching a
  // request would be logged as a recovered panic with its message.
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('[SESSION-bound] rejects capacity %s, saying why', (capacity) => {
    expect(() => new Session(capacity, codec)).toThrow(new RangeError('session: capacity must be a positive integer'));
  });

  it('[SESSION-content] refuses an id containing NUL, the separator of its compact form, saying why', () => {
    expect(() => new Session(3, codec).recordView('a\u0000b')).toThrow(new RangeError('session: an order id cannot contain NUL'));
  });
  it('order ids (canonical UUIDs, kept packed) round-trip exactly, mixed with other ids, bytes 0x00-0x02 and 0xff included', () => {
    const session = new Session(6, codec);
    const ids = [
      '00000000-0000-0000-0000-000000000000',
      '01020001-0200-0102-0001-020000010200',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      'not-a-uuid',
      '3F2504E0-4F89-41D3-9D01-0305E82C3301', // upper case: not canonical, kept verbatim as given
      '3f2504e0-4f89-41d3-9d01-0305e82c3301',
    ];
    for (const id of ids) session.recordView(id);
    expect(session.recent()).toEqual([...ids].reverse());
    // Dedupe compares the packed forms: a re-view of a packed id moves it, nothing is duplicated.
    session.recordView('01020001-0200-0102-0001-020000010200');
    expect(session.recent()).toEqual([ids[1], ids[5], ids[4], ids[3], ids[2], ids[0]]);
    session.recordView('a1b2c3d4-0000-4000-8000-000000000001');
    expect(session.recent()).toHaveLength(6);
    expect(session.recent()[0]).toBe('a1b2c3d4-0000-4000-8000-000000000001');
    expect(session.recent()).not.toContain(ids[0]);
  });

  it('any id round-trips exactly, and only canonical lower-case UUIDs are packed (property)', () => {
    const uuid = fc.uuid();
    const id = fc.oneof(
      uuid,
      uuid.map((u) => u.toUpperCase()),
      fc.string({ unit: 'binary' }).filter((s) => !s.includes('\u0000')),
      fc.stringMatching(/^[0-9a-gA-F-]{36}$/),
    );
    fc.assert(
      fc.property(fc.array(id, { maxLength: 12 }), (ids) => {
        const session = new Session(20, codec);
        for (const one of ids) session.recordView(one);
        const expected = [...new Set([...ids].reverse())];
        expect(session.recent()).toEqual(expected);
      }),
    );
  });
});
