import { request, type Case, type RequestCase } from '../case-model.ts';
import type { ListQuery } from '../drivers/driver.ts';
import { answers, refs } from './messages.ts';

/** GET /orders and ListOrders: shape, ownership, ordering and the clamps of spec 4.1 rule 6 / 8. */

const page = (orders: readonly string[] | undefined, length?: number) =>
  ({ shape: 'ListOrdersResponse', ...(orders ? { orders } : {}), ...(length === undefined ? {} : { ordersLength: length }) }) as const;
const list = (orders: readonly string[] | undefined, length?: number): RequestCase['expect'] => answers(page(orders, length));

const basics: Case[] = [
  request(
    'list-no-orders-is-empty-array',
    ['LIST-200', 'SHAPE-list-response', 'SVC-operations'],
    { needs: ['users'], op: 'listOrders', input: {} },
    list([]),
  ),
  request(
    'list-only-own-orders',
    ['LIST-200', 'AUTH-own-user'],
    {
      needs: ['users'],
      setup: { users: ['me', 'other'], orders: [{ ref: 'mine' }, { ref: 'theirs', owner: 'other', count: 2 }] },
      op: 'listOrders',
      input: {},
    },
    list(['{order:mine}']),
  ),
  request(
    'list-newest-first',
    ['LIST-order', 'LIST-200'],
    { needs: ['users'], setup: { orders: [{ ref: 'o', count: 4 }] }, op: 'listOrders', input: {} },
    list(refs('o', 4, 1)),
  ),
];

interface Clamp {
  readonly name: string;
  readonly rules: readonly string[];
  readonly orders: number;
  readonly query: ListQuery;
  /** Ids expected, as 1-based creation indices from newest to oldest. */
  readonly newestFrom: number;
  readonly length: number;
  readonly restOnly?: boolean;
}

const LIMIT_DEFAULT = ['LIST-limit-default', 'LIMIT-page-default'];
const LIMIT_CLAMP = ['LIST-limit-clamp', 'LIMIT-page-max'];
const OFFSET_NEG = ['LIST-offset-negative', 'LIMIT-offset-min'];

const clamps: readonly Clamp[] = [
  { name: 'list-limit-absent', rules: LIMIT_DEFAULT, orders: 25, query: {}, newestFrom: 25, length: 20 },
  { name: 'list-limit-unparsable', rules: LIMIT_DEFAULT, orders: 25, query: { limit: 'abc' }, newestFrom: 25, length: 20, restOnly: true },
  { name: 'list-limit-empty', rules: LIMIT_DEFAULT, orders: 25, query: { limit: '' }, newestFrom: 25, length: 20, restOnly: true },
  { name: 'list-limit-fraction', rules: LIMIT_DEFAULT, orders: 25, query: { limit: '5.5' }, newestFrom: 25, length: 20, restOnly: true },
  { name: 'list-limit-zero', rules: [...LIMIT_CLAMP, ...LIMIT_DEFAULT], orders: 25, query: { limit: 0 }, newestFrom: 25, length: 20 },
  { name: 'list-limit-negative', rules: LIMIT_CLAMP, orders: 25, query: { limit: -1 }, newestFrom: 25, length: 20 },
  { name: 'list-limit-101', rules: LIMIT_CLAMP, orders: 105, query: { limit: 101 }, newestFrom: 105, length: 20 },
  { name: 'list-limit-100', rules: LIMIT_CLAMP, orders: 105, query: { limit: 100 }, newestFrom: 105, length: 100 },
  { name: 'list-limit-1', rules: LIMIT_CLAMP, orders: 3, query: { limit: 1 }, newestFrom: 3, length: 1 },
  { name: 'list-limit-5', rules: LIMIT_CLAMP, orders: 8, query: { limit: 5 }, newestFrom: 8, length: 5 },
  { name: 'list-offset-2', rules: ['LIST-200', 'LIST-order'], orders: 5, query: { offset: 2 }, newestFrom: 3, length: 3 },
  {
    name: 'list-offset-and-limit',
    rules: ['LIST-200', ...LIMIT_CLAMP],
    orders: 6,
    query: { limit: 2, offset: 1 },
    newestFrom: 5,
    length: 2,
  },
  {
    name: 'list-offset-past-the-end',
    rules: ['LIST-200', 'SHAPE-list-response'],
    orders: 2,
    query: { offset: 10 },
    newestFrom: 0,
    length: 0,
  },
  { name: 'list-offset-negative', rules: OFFSET_NEG, orders: 3, query: { offset: -1 }, newestFrom: 3, length: 3 },
  { name: 'list-offset-very-negative', rules: OFFSET_NEG, orders: 3, query: { offset: -1000 }, newestFrom: 3, length: 3 },
  {
    name: 'list-offset-unparsable',
    rules: ['LIST-offset-default', 'LIMIT-offset-min'],
    orders: 3,
    query: { offset: 'x' },
    newestFrom: 3,
    length: 3,
    restOnly: true,
  },
  { name: 'list-offset-empty', rules: ['LIST-offset-default'], orders: 3, query: { offset: '' }, newestFrom: 3, length: 3, restOnly: true },
];

const clampCases: Case[] = clamps.map((c): RequestCase => {
  // Exact ids where the setup is small enough to space creations; counts for the bulk ones.
  const exact = c.orders <= 20;
  const ids = c.length === 0 ? [] : refs('o', c.newestFrom, c.newestFrom - c.length + 1);
  const expect = exact ? list(ids) : list(undefined, c.length);
  // REST only: query text no int32 field can carry.
  return request(
    c.name,
    c.rules,
    { needs: ['users'], setup: { orders: [{ ref: 'o', count: c.orders }] }, op: 'listOrders', input: c.query },
    c.restOnly ? { http: expect.http! } : expect,
  );
});

export const LIST_CASES: Case[] = [...basics, ...clampCases];
