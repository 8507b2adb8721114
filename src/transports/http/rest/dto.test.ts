import { describe, expect, it } from 'vitest';
import { decodeCreateOrderRequest, decodeLoginRequest, toCachedOrderDto, toOrderDto } from './dto.ts';
import { ErrMalformedBody } from '../../errors/request-errors.ts';

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

describe('toCachedOrderDto', () => {
  it('is toOrderDto, built once per Order object (the near cache hands out the same one on every hit)', () => {
    const order = {
      id: '3f2504e0-4f89-41d3-9d01-0305e82c3301',
      userId: 'u',
      item: 'book',
      quantity: 2,
      status: 'pending',
      createdAt: new Date('2026-11-23T01:02:03.004Z'),
    } as const;
    const dto = toCachedOrderDto(order);
    expect(dto).toEqual(toOrderDto(order));
    expect(dto).toEqual({ id: order.id, item: 'book', quantity: 2, status: 'pending', created_at: '2026-11-23T01:02:03.004Z' });
    expect(toCachedOrderDto(order)).toBe(dto);
    expect(Object.isFrozen(dto)).toBe(true);
    // An equal but distinct object (a list's or a create's order) gets its own.
    expect(toCachedOrderDto({ ...order })).not.toBe(dto);
  });
});
