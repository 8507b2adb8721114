/**
 * ordersv1.Orders on the unary server: each method calls the core service and maps the result, as
 * http/rest/api.ts does for REST; errors are thrown for handler.ts to answer from the one error table.
 */
import { create, type DescMethod, type Message } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Core } from '../transport.ts';
import type { Order as DomainOrder } from '../../domain/order.ts';
import type { Principal } from '../../service/authenticate.ts';
import type { CallContext } from '../../service/order-service.ts';
import {
  OrderSchema,
  Orders,
  type CreateOrderRequest,
  type GetOrderRequest,
  type ListOrdersRequest,
  type LoginRequest,
  type Order,
} from '../../gen/ordersv1/orders_pb.js';
import { requirePrincipal } from './auth-interceptor.ts';
import type { UnaryCall, UnaryMethod } from '../../../packages/one-port-grpc/index.ts';

/** Wire shape of an order (spec 2.1), as the HTTP DTO but with a Timestamp for created_at. */
export function toOrderMessage(order: DomainOrder): Order {
  return create(OrderSchema, {
    id: order.id,
    item: order.item,
    quantity: order.quantity,
    status: order.status,
    createdAt: timestampFromDate(order.createdAt),
  });
}

type Call = UnaryCall<Principal>;

/** The caller as the interceptor left it, and the call's done signal for the session lease (spec 3.2 rule 2). */
function callContext(call: Call): CallContext {
  return { principal: requirePrincipal(call), signal: call.signal };
}

/** Full method name (spec 4.4, 9 rule 1): the key the server routes by. */
export function fullMethodName(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/** The methods by full name, as the unary server routes them. */
export function createOrdersMethods(core: Pick<Core, 'auth' | 'orders'>): Map<string, UnaryMethod<Principal>> {
  const handlers: Record<keyof typeof Orders.method, (req: never, call: Call) => Promise<Message>> = {
    // The peer keys the login gate (rule LOGIN-gate-fair).
    login: async (req: LoginRequest, call) =>
      create(Orders.method.login.output, { token: await core.auth.login(req.username, req.password, call.peer, call.signal) }),
    createOrder: async (req: CreateOrderRequest, call) => {
      // Idempotency-Key as metadata (rules IDEM-*), parsed by the service; node:http2 joins a repeated one with ', '.
      const idempotencyKey = call.headers['idempotency-key'] as string | undefined;
      return toOrderMessage(await core.orders.create(callContext(call), req.item, req.quantity, { idempotencyKey }));
    },
    getOrder: async (req: GetOrderRequest, call) => toOrderMessage(await core.orders.get(callContext(call), req.id)),
    listOrders: async (req: ListOrdersRequest, call) => {
      // The service clamps (spec 4.1 rule 6): proto3's 0 for an absent field gives the default 20.
      const orders = await core.orders.list(callContext(call), req.limit, req.offset);
      return create(Orders.method.listOrders.output, { orders: orders.map(toOrderMessage) });
    },
    recent: async (_req, call) => create(Orders.method.recent.output, { recent: core.orders.recent(callContext(call)) }),
  };
  const methods = new Map<string, UnaryMethod<Principal>>();
  for (const [key, handle] of Object.entries(handlers)) {
    const method = Orders.method[key as keyof typeof Orders.method];
    methods.set(fullMethodName(method), { input: method.input, output: method.output, handle: handle as UnaryMethod<Principal>['handle'] });
  }
  return methods;
}
