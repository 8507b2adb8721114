import { describe, expect, it } from 'vitest';
import { ORDERS_PROTO } from './drivers/grpc.ts';

type MethodDef = {
  path: string;
  requestType: { type: { name: string } };
  responseType: { type: { name: string } };
  requestStream: boolean;
  responseStream: boolean;
};

describe('the .proto contract (spec 4.4)', () => {
  it('[GRPC-message-names, GRPC-service, GRPC-fields] five unary methods of ordersv1.Orders with the spec message names', () => {
    const service = ORDERS_PROTO['ordersv1.Orders'] as Record<string, MethodDef>;
    const shape = Object.fromEntries(
      Object.entries(service).map(([m, d]) => [
        m,
        [d.path, d.requestType.type.name, d.responseType.type.name, d.requestStream || d.responseStream],
      ]),
    );
    expect(shape).toEqual({
      Login: ['/ordersv1.Orders/Login', 'LoginRequest', 'LoginResponse', false],
      CreateOrder: ['/ordersv1.Orders/CreateOrder', 'CreateOrderRequest', 'Order', false],
      GetOrder: ['/ordersv1.Orders/GetOrder', 'GetOrderRequest', 'Order', false],
      ListOrders: ['/ordersv1.Orders/ListOrders', 'ListOrdersRequest', 'ListOrdersResponse', false],
      Recent: ['/ordersv1.Orders/Recent', 'RecentRequest', 'RecentResponse', false],
    });
  });
});
