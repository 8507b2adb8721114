/**
 * What orders-koa's layers share about one request: the state they keep on `ctx.state`, the typed
 * context, the answer helpers that write exactly the headers orders-stdlib writes (spec 4.1), and the
 * route label the observers record (spec 4.5).
 */
import type { RouterContext, RouterMiddleware } from '@koa/router';
import type { Principal } from '../../service/authenticate.ts';
import type { StaticReply } from '../http/docs/static-reply.ts';
import { routeLabel, toBracePattern } from '../http/rest/routes.ts';

/** What our layers keep on `ctx.state` for one request. */
export interface KoaState {
  /** Aborts when the request ends: the session lease's fallback (spec 3.2 rule 2). */
  done?: AbortSignal;
  /** The caller, set by the authentication step of a protected route. */
  principal?: Principal;
  /** The login body, already read by the validation step, so the operation does not read the stream twice. */
  body?: string;
  /** Set by the rate limiter when it refused the request: the label of the route it addressed. */
  throttledRoute?: string;
}

export type KoaContext = RouterContext<KoaState>;
export type KoaMiddleware = RouterMiddleware<KoaState>;

/**
 * Koa would serialise an object body itself, and `ctx.type` would add `; charset=utf-8`: the header is set
 * as it is and the text written, so both are exactly what orders-stdlib sends. Koa keeps a content type
 * that is already set.
 */
export function sendJson(ctx: KoaContext, status: number, body: unknown): void {
  ctx.status = status;
  ctx.set('Content-Type', 'application/json');
  ctx.body = JSON.stringify(body);
}

/** Spec 7's error body: `{"error": "<message>"}`. */
export function sendError(ctx: KoaContext, status: number, message: string): void {
  sendJson(ctx, status, { error: message });
}

/** Headers first: Koa keeps a content type that is already set, for a Buffer body too. */
export function sendStatic(ctx: KoaContext, reply: StaticReply): void {
  ctx.status = reply.status;
  ctx.set(reply.headers);
  ctx.body = reply.body;
}

/**
 * The spec 4.5 label of the request's route, or undefined when none served it: the route @koa/router
 * ran (`ctx.routerPath`, set as a matched route starts, in its colon form), or the one the rate limiter
 * resolved for a request it refused.
 */
export function routeLabelOf(ctx: KoaContext): string | undefined {
  if (ctx.state.throttledRoute !== undefined) return ctx.state.throttledRoute;
  return ctx.routerPath === undefined ? undefined : routeLabel(ctx.method, toBracePattern(ctx.routerPath));
}
