/**
 * What orders-koa's layers share about one request: the state they keep on `ctx.state`, the typed
 * context, the answer helpers that write exactly the headers orders-stdlib writes (spec 4.1), and the
 * route label the observers record (spec 4.5).
 */
import type { RouterContext, RouterMiddleware } from '@koa/router';
import type { StaticReply } from '../http/docs/static-reply.ts';
import { routeLabel, toBracePattern } from '../http/rest/routes.ts';

/** What our layers keep on `ctx.state` for one request. */
export interface KoaState {
  /** Aborts when the request ends (spec 3.2 rule 2); set by middleware.ts doneSignal. */
  done?: AbortSignal;
  /** The login body, already read by the validation step. */
  body?: string;
  /** The label of the route a request the rate limiter refused addressed. */
  throttledRoute?: string;
}

export type KoaContext = RouterContext<KoaState>;
export type KoaMiddleware = RouterMiddleware<KoaState>;

/** The header set as is and the text written (Koa keeps a set type), so both are exactly what orders-stdlib sends. */
export function sendJson(ctx: KoaContext, status: number, body: unknown): void {
  ctx.status = status;
  ctx.set('Content-Type', 'application/json');
  ctx.body = JSON.stringify(body);
}

/** Spec 7's error body: `{"error": "<message>"}`. */
export function sendError(ctx: KoaContext, status: number, message: string): void {
  sendJson(ctx, status, { error: message });
}

/** Headers first: Koa keeps a set content type, for a Buffer body too. */
export function sendStatic(ctx: KoaContext, reply: StaticReply): void {
  ctx.status = reply.status;
  ctx.set(reply.headers);
  ctx.body = reply.body;
}

/** The spec 4.5 label: the route @koa/router ran (`ctx.routerPath`, colon form), or the one a refused request addressed. */
export function routeLabelOf(ctx: KoaContext): string | undefined {
  if (ctx.state.throttledRoute !== undefined) return ctx.state.throttledRoute;
  return ctx.routerPath === undefined ? undefined : routeLabel(ctx.method, toBracePattern(ctx.routerPath));
}
