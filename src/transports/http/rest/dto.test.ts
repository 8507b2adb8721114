import { describe, expect, it } from 'vitest';
import { pageOf } from '../../../service/order-service.ts';
import { decodeCreateOrderRequest, decodeLoginRequest, queryInteger, toOrderDto } from './dto.ts';
import { ErrMalformedBody } from '../../errors/table.ts';

function malformed(decode: (raw: string) => unknown, raw: string): unknown {
  try {
    decode(raw);
  } catch (error) {
    return error;
  }
  return undefined;
}

// Undecodable bodies (not JSON, empty, truncated, null, array, string) and the wrong field types the
// spec names are the login-body-* / create-body-* / create-quantity-* conformance cases; these add the rest.
describe('decodeLoginRequest', () => {
  it.each([
    ['a number', '42'],
    ['username as a number', '{"username": 1, "password": "x"}'],
    ['password as a boolean', '{"username": "alice", "password": true}'],
    ['username as an object', '{"username": {}, "password": "x"}'],
    ['password as an array', '{"username": "alice", "password": ["x"]}'],
  ])('%s → ErrMalformedBody `malformed request body`', (_name, raw) => {
    const error = malformed(decodeLoginRequest, raw);
    expect(error).toBeInstanceOf(ErrMalformedBody);
    expect((error as Error).message).toBe('malformed request body');
  });

  it('decodes the fields, ignoring unknown ones', () => {
    expect(decodeLoginRequest('{"username": "alice", "password": "p w", "extra": 1}')).toStrictEqual({
      username: 'alice',
      password: 'p w',
    });
  });

  it('absent (or null) fields decode to empty strings: validation is not the decoder’s job', () => {
    expect(decodeLoginRequest('{}')).toStrictEqual({ username: '', password: '' });
    expect(decodeLoginRequest('{"username": null}')).toStrictEqual({ username: '', password: '' });
  });
});

// Absent fields decoding to zero values, so the domain reports them (spec 7 rule 2), is the
// create-item-absent / create-quantity-absent conformance cases.
describe('decodeCreateOrderRequest', () => {
  it.each([
    ['quantity as a boolean', '{"item": "widget", "quantity": true}'],
    ['quantity as an object', '{"item": "widget", "quantity": {}}'],
  ])('%s → ErrMalformedBody', (_name, raw) => {
    expect(malformed(decodeCreateOrderRequest, raw)).toBeInstanceOf(ErrMalformedBody);
  });
});

describe('toOrderDto', () => {
  it('is the wire shape of spec 2.1: created_at in RFC 3339 with milliseconds, no user id', () => {
    const order = {
      id: '3f2504e0-4f89-41d3-9d01-0305e82c3301',
      userId: 'u',
      item: 'book',
      quantity: 2,
      status: 'pending',
      createdAt: new Date('2026-11-23T01:02:03.004Z'),
    } as const;
    expect(toOrderDto(order)).toStrictEqual({
      id: order.id,
      item: 'book',
      quantity: 2,
      status: 'pending',
      created_at: '2026-11-23T01:02:03.004Z',
    });
  });
});

/**
 * Spec 4.1 rule 6 (limit: default 20, <= 0 or > 100 gives 20; offset: default 0, negative gives 0), as a
 * query string reaches the clamps: parsed here, clamped by the service. Absent, empty, unparsable, 0,
 * 101, 100 and 1 limits and absent, empty, unparsable and -1 offsets are the list-limit-* and
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

const page = (limit: string | null | undefined, offset: string | null | undefined) => pageOf(queryInteger(limit), queryInteger(offset));

describe('queryInteger, then the service clamps (spec 4.1 rule 6): never an error', () => {
  it.each(LIMITS)('limit %j → %i', (text, limit) => {
    expect(page(text, undefined)).toStrictEqual({ limit, offset: 0 });
  });

  it.each(OFFSETS)('offset %j → %i', (text, offset) => {
    expect(page(undefined, text)).toStrictEqual({ limit: 20, offset });
  });

  it('clamps each parameter independently', () => {
    expect(page('101', '30')).toStrictEqual({ limit: 20, offset: 30 });
    expect(page('5', '-1')).toStrictEqual({ limit: 5, offset: 0 });
  });

  it('only a whole decimal number is a number; anything else is left to the default', () => {
    expect(['1.5', '1e2', '0x10', '12abc', '', ' ', '99999999999999999999'].map(queryInteger)).toStrictEqual(Array(7).fill(undefined));
    expect(['-5', '+5', ' 7 ', '0'].map(queryInteger)).toStrictEqual([-5, 5, 7, 0]);
  });
});
