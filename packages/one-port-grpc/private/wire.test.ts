import { describe, expect, it } from 'vitest';
import { encodeGrpcMessage, parseGrpcTimeout } from './wire.ts';

describe('grpc-timeout (rule GRPC-timeout-clamp)', () => {
  it.each([
    ['1S', 1_000],
    ['250m', 250],
    ['2M', 120_000],
    ['1H', 3_600_000],
    ['1500u', 2],
    ['1n', 1],
    ['0m', 0],
    ['99999999H', 2 ** 31 - 1],
    ['99999999S', 2 ** 31 - 1],
  ])('%s → %i ms', (value, ms) => expect(parseGrpcTimeout(value)).toBe(ms));
  it.each(['', '1', 'S', '123456789S', '1s', '-1S', '1.5S', ' 1S', '1Sx', '5mjunk', '1S '])('%o is malformed', (value) =>
    expect(parseGrpcTimeout(value)).toBeNaN(),
  );
  it('absent: no deadline', () => expect(parseGrpcTimeout(undefined)).toBeUndefined());
});

describe('grpc-message encoding', () => {
  it('printable ASCII without % goes as is; anything else is percent-encoded UTF-8 that decodes back', () => {
    expect(encodeGrpcMessage('invalid order id')).toBe('invalid order id');
    for (const text of ['100% sure', 'café', 'line\nbreak']) {
      expect(encodeGrpcMessage(text)).toMatch(/^[\x20-\x7e]*$/);
      expect(decodeURIComponent(encodeGrpcMessage(text))).toBe(text);
    }
  });
});
