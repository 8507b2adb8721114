import { describe, expect, it } from 'vitest';
import type { OrderPlaced } from '../../domain/order-placed.ts';
import { decodeOrderPlaced } from './event-bus.ts';

const EVENT: OrderPlaced = {
  order_id: '9b2f5a1e-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
  user_id: '1f0e9d8c-7b6a-4958-8372-6150a4b3c2d1',
  item: 'widget',
  quantity: 3,
  created_at: '2026-11-26T23:00:00.000Z',
};

// What the bus publishes (its wire form) is held by test/contracts/nats-event-bus.real.test.ts.
describe('decodeOrderPlaced', () => {
  it('[EVT-6-subject-payload] decodes the five snake_case fields of the JSON wire form', () => {
    expect(decodeOrderPlaced(JSON.stringify(EVENT))).toStrictEqual(EVENT);
  });

  it('[EVT-6-subject-payload] decoding keeps the five fields only', () => {
    expect(decodeOrderPlaced(JSON.stringify({ ...EVENT, user: 'x', password: 'p' }))).toStrictEqual(EVENT);
  });

  it('[EVT-6-subject-payload] text that is no JSON object is no event', () => {
    for (const text of ['', 'not json', '{"order_id":', 'null', '42', '"text"', 'true', '[]', '{}']) {
      expect(decodeOrderPlaced(text)).toBeUndefined();
    }
  });

  it.each([
    ['order_id', 7],
    ['user_id', null],
    ['item', ['widget']],
    ['quantity', '3'],
    ['created_at', 0],
  ])('[EVT-6-subject-payload] a payload whose %s is of the wrong type is no event', (field, wrong) => {
    expect(decodeOrderPlaced(JSON.stringify({ ...EVENT, [field]: wrong }))).toBeUndefined();
    const { [field as keyof OrderPlaced]: _dropped, ...missing } = EVENT;
    expect(decodeOrderPlaced(JSON.stringify(missing))).toBeUndefined();
  });
});
