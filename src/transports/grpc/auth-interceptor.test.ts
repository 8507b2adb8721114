import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { Health } from '../../gen/grpc/health/v1/health_pb.js';
import { Orders } from '../../gen/ordersv1/orders_pb.js';
import { ErrMissingCredentials, type Principal } from '../../service/authenticate.ts';
import { TokenService } from '../../service/token-service.ts';
import { authInterceptor } from './auth-interceptor.ts';
import { createOrdersMethods, fullMethodName } from './orders-service.ts';
import type { UnaryCall } from '../../../packages/one-port-grpc/index.ts';

/** The interceptor and the handlers' own check on their own, without a server (rules GRPC-auth-exempt, GRPC-health). */
describe('which gRPC methods need a token (rules GRPC-auth-exempt, GRPC-health)', () => {
  const intercept = authInterceptor(new TokenService('x'.repeat(32), 60_000));

  it('Login and the health protocol’s Check and Watch are admitted without one; every other ordersv1.Orders method is refused', async () => {
    for (const method of [Orders.method.login, Health.method.check, Health.method.watch])
      expect(intercept(fullMethodName(method), {}), method.name).toBeUndefined();
    for (const method of [Orders.method.createOrder, Orders.method.getOrder, Orders.method.listOrders, Orders.method.recent])
      await expect(intercept(fullMethodName(method), {}), method.name).rejects.toBeInstanceOf(ErrMissingCredentials);
  });

  it('a protected method reached without a principal is refused, never served anonymously', async () => {
    const served: string[] = [];
    const core = {
      orders: { get: async () => served.push('get') },
    } as unknown as Parameters<typeof createOrdersMethods>[0];
    const getOrder = createOrdersMethods(core).get(fullMethodName(Orders.method.getOrder))!;
    const call = { method: '/ordersv1.Orders/GetOrder', principal: undefined, signal: new AbortController().signal, headers: {}, peer: '' };
    await expect(getOrder.handle(create(Orders.method.getOrder.input, { id: 'x' }), call as UnaryCall<Principal>)).rejects.toBeInstanceOf(
      ErrMissingCredentials,
    );
    expect(served).toEqual([]);
  });
});
