// A new order's validation and the order id's form (rules ORDER-item-limits, ERR-invalid-order-id).
import { describe, expect, it } from 'vitest';
import { ErrInvalidOrderId, ErrValidation } from './errors.ts';
import { createOrder, parseOrderId, validateNewOrder, type NewOrderInput } from './order.ts';

const USER = '6f1c2a4e-0b7d-4c1e-9a35-2f8e1d0c9b77';
const ID = '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b';
const NOW = new Date('2025-01-02T03:04:05.678Z');

function input(overrides: Partial<NewOrderInput> = {}): NewOrderInput {
  return { userId: USER, item: 'widget', quantity: 1, ...overrides };
}

function validationMessage(value: NewOrderInput): string | undefined {
  try {
    validateNewOrder(value);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ErrValidation);
    return (error as ErrValidation).message;
  }
}

// Empty, blank, absent and 201-character items, 200 (also non-ASCII) characters, quantities 0, -5, absent,
// 2147483647 and one more are the create-item-* / create-quantity-* conformance cases on every transport;
// these are the values no transport can send (a gRPC int32 is never fractional, JSON has no NaN).
describe('validateNewOrder (spec 2.1, 7 rule 2)', () => {
  it.each<[string, Partial<NewOrderInput>, string | undefined]>([
    ['a fractional quantity', { quantity: 1.5 }, 'quantity must be a positive integer'],
    ['a NaN quantity', { quantity: Number.NaN }, 'quantity must be a positive integer'],
    ['an infinite quantity', { quantity: Number.POSITIVE_INFINITY }, 'quantity must be a positive integer'],
    ['a quantity beyond the safe integers', { quantity: Number.MAX_SAFE_INTEGER + 1 }, 'quantity must be a positive integer'],
    ['an item of tabs and newlines', { item: '\t\n ' }, 'item is required'],
    // Characters, not UTF-16 units: 200 astral characters are 400 units.
    ['200 astral characters', { item: '📦'.repeat(200) }, undefined],
    ['201 astral characters', { item: '📦'.repeat(201) }, 'item must be at most 200 characters'],
    ['a NUL character', { item: 'a\u0000b' }, 'item must not contain NUL characters'],
    // One error, the first rule that fails: the item before the quantity.
    ['an empty item and quantity 0', { item: '', quantity: 0 }, 'item is required'],
  ])('%s → %s', (_label, overrides, message) => {
    expect(validationMessage(input(overrides))).toBe(message);
  });
});

// That createOrder validates first (an invalid input never becomes an order) is the create-item-* /
// create-quantity-* conformance cases.
describe('createOrder', () => {
  it('builds a pending order from the input, the id and the time, always `pending` whatever the caller smuggles in (spec 3.1)', () => {
    const smuggled = { ...input({ item: 'gadget', quantity: 3 }), status: 'shipped' } as NewOrderInput;
    expect(createOrder(smuggled, ID, NOW)).toStrictEqual({
      id: ID,
      userId: USER,
      item: 'gadget',
      quantity: 3,
      status: 'pending',
      createdAt: NOW,
    });
  });
});

describe('parseOrderId (spec 7 rule 1)', () => {
  it.each([
    [ID, ID],
    [ID.toUpperCase(), ID],
    ['0E4A8c2b-5d61-4F3A-8b7e-9C1D2E3F4A5B', '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5b'],
    ['00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000'],
  ])('accepts the UUID %s as %s', (value, parsed) => {
    expect(parseOrderId(value)).toBe(parsed);
  });

  // '', 'not-a-uuid', a number, a UUID without dashes or with a suffix: the get-id-* conformance cases.
  it.each([`${ID} `, ` ${ID}`, `{${ID}}`, '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5g', `${ID}\n`, '../../etc/passwd'])(
    'refuses %j with ErrInvalidOrderId',
    (value) => {
      expect(() => parseOrderId(value)).toThrow(ErrInvalidOrderId);
      expect(() => parseOrderId(value)).toThrow('invalid order id');
    },
  );
});
