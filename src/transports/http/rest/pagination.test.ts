import { describe, expect, it } from 'vitest';
import { pageFromQuery } from './pagination.ts';

/**
 * Spec 4.1 rule 6 (limit: default 20, <= 0 or > 100 gives 20; offset: default 0, negative gives 0). Absent,
 * empty, unparsable, 0, 101, 100 and 1 limits and absent, empty, unparsable and -1 offsets are the list-limit-* and
 * list-offset-* conformance cases; these are the other spellings.
 */
const LIMITS: [string | null | undefined, number][] = [
  [null, 20],
  ['-5', 20],
  ['1000000', 20],
  ['99', 99],
  ['1.5', 20],
  ['1e2', 20],
  ['0x10', 20],
  ['12abc', 20],
  ['99999999999999999999', 20],
  // Our choice: surrounding blanks are ignored (a query value rarely has them on purpose).
  [' 7 ', 7],
  ['+5', 5],
];

const OFFSETS: [string | null | undefined, number][] = [
  [null, 0],
  ['30', 30],
  ['0', 0],
  ['2.5', 0],
  ['1000000', 1_000_000],
  ['-7', 0],
  // Not negative zero: the repository gets a plain 0.
  ['-0', 0],
];

describe('pageFromQuery (spec 4.1 rule 6): clamps, never errors', () => {
  it.each(LIMITS)('limit %j → %i', (text, limit) => {
    expect(pageFromQuery(text, undefined)).toStrictEqual({ limit, offset: 0 });
  });

  it.each(OFFSETS)('offset %j → %i', (text, offset) => {
    expect(pageFromQuery(undefined, text)).toStrictEqual({ limit: 20, offset });
  });

  it('clamps each parameter independently', () => {
    expect(pageFromQuery('101', '30')).toStrictEqual({ limit: 20, offset: 30 });
    expect(pageFromQuery('5', '-1')).toStrictEqual({ limit: 5, offset: 0 });
  });
});
