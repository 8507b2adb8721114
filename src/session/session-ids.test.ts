import { describe, expect, it } from 'vitest';
import { packedUuids } from './packed-uuids.ts';
import { plainIds, Session } from './session.ts';

/** Ids at the edges of the packer's checks: every hex digit's bounds, the hyphens, the length. */
const CANONICAL = ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b'];
const OTHERS = [
  'short-id',
  '0E4A8C2B-5D61-4F3A-8B7E-9C1D2E3F4A5B', // upper case is not canonical
  'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
  '0e4a8c2bx5d61-4f3a-8b7e-9c1d2e3f4a5b', // a hyphen missing
  '0e4a8c2b-5d61x4f3a-8b7e-9c1d2e3f4a5b',
  '0e4a8c2b-5d61-4f3ax8b7e-9c1d2e3f4a5b',
  '0e4a8c2b-5d61-4f3a-8b7ex9c1d2e3f4a5b',
  '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5', // 35 characters
  '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b0', // 37
  '/0000000-0000-0000-0000-000000000000', // '/' is just below '0'
  ':0000000-0000-0000-0000-000000000000', // ':' just above '9'
  '`0000000-0000-0000-0000-000000000000', // '`' just below 'a'
  'g0000000-0000-0000-0000-000000000000', // 'g' just above 'f'
  '0/000000-0000-0000-0000-000000000000', // the low digit of a byte checked too
  '0000000g-0000-0000-0000-000000000000',
  '00000000-0000-0000-0000-00000000000g', // the last byte
];

describe.each([
  ['ids as they are', plainIds],
  ['ids packed', packedUuids],
])('session ids (%s)', (_name, codec) => {
  it('[SESSION-content] every id comes back exactly as recorded, canonical or not, most recent first', () => {
    const session = new Session(CANONICAL.length + OTHERS.length, codec);
    for (const id of [...CANONICAL, ...OTHERS]) session.recordView(id);
    expect(session.recent()).toEqual([...CANONICAL, ...OTHERS].reverse());
  });
});

describe('packedUuids: the memory seam (rule LIMIT-session-cap)', () => {
  it('[LIMIT-session-cap] holds a canonical lower-case UUID in 17 characters (a tag and its 16 bytes), and reads it back', () => {
    for (const id of CANONICAL) {
      const entry = packedUuids.encode(id);
      expect(entry).toHaveLength(17);
      expect(packedUuids.entryEnd(entry + entry, 0)).toBe(17);
      expect(packedUuids.decode(entry)).toBe(id);
    }
  });

  it('[LIMIT-session-cap] holds any other id verbatim, between its tag and a NUL, and reads it back', () => {
    for (const id of OTHERS) {
      const entry = packedUuids.encode(id);
      expect(entry).toHaveLength(id.length + 2);
      expect(entry.slice(1, -1)).toBe(id);
      expect(packedUuids.entryEnd(entry + entry, 0)).toBe(entry.length);
      expect(packedUuids.decode(entry)).toBe(id);
    }
  });
});
