import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { Core } from '../../composition/create-app.ts';
import { isOrderId, type Order as DomainOrder } from '../../domain/order.ts';
import type { CallContext } from '../../service/order-service.ts';
import { ErrInvalidOrderId } from '../http/http-errors.ts';
import { pageFromQuery } from '../http/pagination.ts';
import { OrderSchema, type Order, type Orders } from '../../gen/ordersv1/orders_pb.js';
import { requirePrincipal } from './auth-interceptor.ts';

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

/** The caller as the interceptor left it, and the call's done signal for the session lease (spec 3.2 rule 2). */
function callContext(ctx: HandlerContext): CallContext {
  return { principal: requirePrincipal(ctx.values), signal: ctx.signal };
}

/**
 * ordersv1.Orders: parse → core service → map, as RestApi does for HTTP. Errors are thrown as the
 * core raises them; the error interceptor maps them with the one table (grpc-errors.ts).
 */
export function createOrdersService(core: Pick<Core, 'auth' | 'orders'>): ServiceImpl<typeof Orders> {
  return {
    async login(req) {
      return { token: await core.auth.login(req.username, req.password) };
    },
    async createOrder(req, ctx) {
      return toOrderMessage(await core.orders.create(callContext(ctx), req.item, req.quantity));
    },
    async getOrder(req, ctx) {
      const call = callContext(ctx);
      if (!isOrderId(req.id)) throw new ErrInvalidOrderId();
      return toOrderMessage(await core.orders.get(call, req.id.toLowerCase()));
    },
    async listOrders(req, ctx) {
      // The same clamps as GET /orders (spec 4.1 rule 6): proto3's 0 for an absent field gives 20.
      const page = pageFromQuery(String(req.limit), String(req.offset));
      const orders = await core.orders.list(callContext(ctx), page);
      return { orders: orders.map(toOrderMessage) };
    },
    async recent(_req, ctx) {
      return { recent: core.orders.recent(callContext(ctx)) };
    },
  };
}
