import { describe, expect, it } from 'vitest';
import type { Order } from '../../domain/order.ts';
import { decodeCreateOrderRequest, decodeLoginRequest, toOrderDto } from './dto.ts';
import { ErrMalformedBody } from '../errors/request-errors.ts';

function malformed(decode: (raw: string) => unknown, raw: string): unknown {
  try {
    decode(raw);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('decodeLoginRequest', () => {
  it.each([
    ['not JSON', 'username=alice&password=x'],
    ['empty body', ''],
    ['truncated JSON', '{"username": "alice"'],
    ['an array', '["alice", "x"]'],
    ['null', 'null'],
    ['a string', '"alice"'],
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
    expect(decodeLoginRequest('{"username": "alice", "password": "p w", "extra": 1}')).toStrictEqual({ username: 'alice', password: 'p w' });
  });

  it('absent (or null) fields decode to empty strings: validation is not the decoder’s job', () => {
    expect(decodeLoginRequest('{}')).toStrictEqual({ username: '', password: '' });
    expect(decodeLoginRequest('{"username": null}')).toStrictEqual({ username: '', password: '' });
  });
});

describe('decodeCreateOrderRequest', () => {
  it.each([
    ['not JSON', 'item=widget'],
    ['an array', '[]'],
    ['null', 'null'],
    ['item as a number', '{"item": 5, "quantity": 1}'],
    ['quantity as a string', '{"item": "widget", "quantity": "3"}'],
    ['quantity as a fraction', '{"item": "widget", "quantity": 1.5}'],
    ['quantity as a boolean', '{"item": "widget", "quantity": true}'],
    ['quantity as an object', '{"item": "widget", "quantity": {}}'],
  ])('%s → ErrMalformedBody', (_name, raw) => {
    expect(malformed(decodeCreateOrderRequest, raw)).toBeInstanceOf(ErrMalformedBody);
  });

  it('absent fields decode to zero values, so the domain reports them (spec 7 rule 2)', () => {
    expect(decodeCreateOrderRequest('{}')).toStrictEqual({ item: '', quantity: 0 });
    expect(decodeCreateOrderRequest('{"item": "widget"}')).toStrictEqual({ item: 'widget', quantity: 0 });
    expect(decodeCreateOrderRequest('{"quantity": 2}')).toStrictEqual({ item: '', quantity: 2 });
  });

  it('passes non-positive and huge integers through to the domain', () => {
    expect(decodeCreateOrderRequest('{"item": "w", "quantity": -1}')).toStrictEqual({ item: 'w', quantity: -1 });
    expect(decodeCreateOrderRequest('{"item": "w", "quantity": 0}')).toStrictEqual({ item: 'w', quantity: 0 });
    expect(decodeCreateOrderRequest('{"item": "w", "quantity": 3000000000}')).toStrictEqual({ item: 'w', quantity: 3_000_000_000 });
  });
});

describe('toOrderDto (spec 2.1)', () => {
  it('has exactly id, item, quantity, status, created_at (RFC 3339), and no internal field', () => {
    const order = {
      id: '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b',
      userId: '6f1c2a4e-0b7d-4c1e-9a35-2f8e1d0c9b77',
      item: 'widget',
      quantity: 3,
      status: 'pending',
      createdAt: new Date('2025-01-02T03:04:05.678Z'),
      internalNote: 'never on the wire',
    } as Order;
    const dto = toOrderDto(order);
    expect(dto).toStrictEqual({
      id: '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b',
      item: 'widget',
      quantity: 3,
      status: 'pending',
      created_at: '2025-01-02T03:04:05.678Z',
    });
    expect(Object.keys(dto)).toStrictEqual(['id', 'item', 'quantity', 'status', 'created_at']);
    expect(JSON.stringify(dto)).not.toContain('6f1c2a4e');
  });
});
