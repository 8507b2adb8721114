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

describe('validateNewOrder (spec 2.1, 7 rule 2)', () => {
  it.each([
    ['zero', 0],
    ['negative', -1],
    ['fractional', 1.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('refuses a %s quantity as ErrValidation `quantity must be a positive integer`', (_name, quantity) => {
    expect(validationMessage(input({ quantity }))).toBe('quantity must be a positive integer');
  });

  it('accepts quantity 1 and the int32 maximum, refuses one more (gRPC int32, SQL integer)', () => {
    expect(validationMessage(input({ quantity: 1 }))).toBeUndefined();
    expect(validationMessage(input({ quantity: 2_147_483_647 }))).toBeUndefined();
    expect(validationMessage(input({ quantity: 2_147_483_648 }))).toBe('quantity must be at most 2147483647');
    expect(validationMessage(input({ quantity: Number.MAX_SAFE_INTEGER + 1 }))).toBe('quantity must be a positive integer');
  });

  it.each([
    ['empty', ''],
    ['spaces', '   '],
    ['tabs and newlines', '\t\n '],
  ])('refuses an %s item as `item is required`', (_name, item) => {
    expect(validationMessage(input({ item }))).toBe('item is required');
  });

  it('limits the item to 200 characters, counted as characters, not UTF-16 units', () => {
    expect(validationMessage(input({ item: 'x'.repeat(200) }))).toBeUndefined();
    expect(validationMessage(input({ item: 'x'.repeat(201) }))).toBe('item must be at most 200 characters');
    // 200 astral characters are 400 UTF-16 units but still 200 characters.
    expect(validationMessage(input({ item: '📦'.repeat(200) }))).toBeUndefined();
    expect(validationMessage(input({ item: '📦'.repeat(201) }))).toBe('item must be at most 200 characters');
  });

  it('checks the item before the quantity (one error, the first rule that fails)', () => {
    expect(validationMessage(input({ item: '', quantity: 0 }))).toBe('item is required');
  });
});

describe('createOrder', () => {
  it('builds a pending order from the input, the id and the time, always `pending` whatever the caller smuggles in (spec 3.1)', () => {
    const smuggled = { ...input({ item: 'gadget', quantity: 3 }), status: 'shipped' } as NewOrderInput;
    expect(createOrder(smuggled, ID, NOW)).toStrictEqual({ id: ID, userId: USER, item: 'gadget', quantity: 3, status: 'pending', createdAt: NOW });
  });

  it('validates: an invalid input never becomes an order', () => {
    expect(() => createOrder(input({ quantity: 0 }), ID, NOW)).toThrow(ErrValidation);
    expect(() => createOrder(input({ item: ' ' }), ID, NOW)).toThrow('item is required');
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

  it.each([
    '',
    'not-a-uuid',
    '0e4a8c2b5d614f3a8b7e9c1d2e3f4a5b',
    `${ID} `,
    ` ${ID}`,
    `${ID}0`,
    `{${ID}}`,
    '0e4a8c2b-5d61-4f3a-8b7e-9c1d2e3f4a5g',
    `${ID}\n`,
    '../../etc/passwd',
  ])('refuses %j with ErrInvalidOrderId', (value) => {
    expect(() => parseOrderId(value)).toThrow(ErrInvalidOrderId);
    expect(() => parseOrderId(value)).toThrow('invalid order id');
  });
});
