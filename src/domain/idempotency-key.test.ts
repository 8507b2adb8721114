// The Idempotency-Key header's grammar and lifetime (rules IDEM-format, IDEM-expiry).
import { describe, expect, it } from 'vitest';
import { ErrValidation } from './errors.ts';
import { IDEMPOTENCY_KEY_TTL_MS, parseIdempotencyKey } from './idempotency-key.ts';

const INVALID = 'invalid Idempotency-Key header (expected a quoted string of 1 to 255 printable ASCII characters)';

/** The header value's grammar, one branch at a time (the conformance cases send a few whole values). */
describe('parseIdempotencyKey', () => {
  it.each([
    ['"abc"', 'abc'],
    ['abc', 'abc'],
    // RFC 8941 3.3.3: \" and \\ are the only escapes; the key is the unescaped content.
    [String.raw`"a\"b\\c"`, String.raw`a"b\c`],
    // gRPC metadata arrives untrimmed (HTTP strips optional whitespace itself).
    ['  "abc"  ', 'abc'],
    ['\tabc ', 'abc'],
    // A bare token may hold quotes past its first character: it is not a quoted string.
    ['x"abc"', 'x"abc"'],
  ])('[IDEM-format] %j is the key %j', (raw, key) => {
    expect(parseIdempotencyKey(raw)).toBe(key);
  });

  it.each(['""', '"abc"x', '"abc', 'a b', ' a b ', '"a\\b"', '"tab\there"', `"${'k'.repeat(256)}"`])(
    '[IDEM-format] %j is refused with the header rule as the message',
    (raw) => {
      expect(() => parseIdempotencyKey(raw)).toThrow(ErrValidation);
      expect(() => parseIdempotencyKey(raw)).toThrow(INVALID);
    },
  );

  it('[IDEM-format] 255 characters is the longest key', () => {
    expect(parseIdempotencyKey('k'.repeat(255))).toHaveLength(255);
    expect(() => parseIdempotencyKey('k'.repeat(256))).toThrow(INVALID);
  });

  // The replay tests move the clock by this constant; this pins the constant to the chosen 24 hours.
  it('[IDEM-expiry] a key is remembered for 24 hours', () => {
    expect(IDEMPOTENCY_KEY_TTL_MS).toBe(86_400_000);
  });
});
