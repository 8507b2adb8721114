import { describe, expect, it } from 'vitest';
import { OPERATIONS } from './drivers/driver.ts';
import { ORDERS_PROTO } from './drivers/grpc.ts';

type MethodDef = {
  path: string;
  requestType: { type: { name: string } };
  responseType: { type: { name: string } };
  requestStream: boolean;
  responseStream: boolean;
};

/** Spec 4.4's five methods with the message names of spec 2.4 (rule GRPC-message-names). */
const SPEC_METHODS = {
  Login: ['LoginRequest', 'LoginResponse'],
  CreateOrder: ['CreateOrderRequest', 'Order'],
  GetOrder: ['GetOrderRequest', 'Order'],
  ListOrders: ['ListOrdersRequest', 'ListOrdersResponse'],
  Recent: ['RecentRequest', 'RecentResponse'],
} as const satisfies Record<string, readonly [string, string]>;

/**
 * One method per operation of the drivers' table (OPERATIONS), named as the operation is (`countOrders` is
 * CountOrders), so a method the .proto declares and no driver sends, or the reverse, fails here. A method
 * beyond the spec's five takes <Method>Request and returns <Method>Response.
 */
const EXPECTED = Object.fromEntries(
  Object.keys(OPERATIONS).map((operation) => {
    const method = operation[0]!.toUpperCase() + operation.slice(1);
    const [request, response] = SPEC_METHODS[method as keyof typeof SPEC_METHODS] ?? [`${method}Request`, `${method}Response`];
    return [method, [`/ordersv1.Orders/${method}`, request, response, false]];
  }),
);

describe('the .proto contract (spec 4.4)', () => {
  it('[GRPC-message-names, GRPC-service, GRPC-fields] the unary methods of ordersv1.Orders, one per operation, with the spec message names', () => {
    const service = ORDERS_PROTO['ordersv1.Orders'] as Record<string, MethodDef>;
    const shape = Object.fromEntries(
      Object.entries(service).map(([m, d]) => [
        m,
        [d.path, d.requestType.type.name, d.responseType.type.name, d.requestStream || d.responseStream],
      ]),
    );
    expect(Object.keys(EXPECTED)).toEqual(expect.arrayContaining(Object.keys(SPEC_METHODS)));
    expect(shape).toEqual(EXPECTED);
  });
});
