import type { RouterContext, RouterMiddleware } from '@koa/router';
import type { Principal } from '../../service/authenticate.ts';
import { routeLabel, toBracePattern } from '../http/routes.ts';

/** What our layers keep on `ctx.state` for one request. */
export interface KoaState {
  /** Set by the protected group's authentication step only (spec 5 rule 6). */
  principal?: Principal;
  /** The login body, already read by the validation step, so the operation does not read the stream twice. */
  body?: string;
  /** Aborts when the response is finished or the connection dropped: the session lease's fallback. */
  done?: AbortSignal;
  /** Set by koa-ratelimit when it refused the request. */
  rateLimit?: unknown;
}

export type KoaContext = RouterContext<KoaState>;
export type KoaMiddleware = RouterMiddleware<KoaState>;

/**
 * Koa would serialise an object body itself with `application/json; charset=utf-8`; we write the text
 * so the header is exactly the one orders-stdlib sends (spec 4.1).
 */
export function sendJson(ctx: KoaContext, status: number, body: unknown): void {
  sendText(ctx, status, 'application/json', JSON.stringify(body));
}

export function sendError(ctx: KoaContext, status: number, message: string): void {
  sendJson(ctx, status, { error: message });
}

/** Koa keeps a content type that is already set when the body is a string. */
export function sendText(ctx: KoaContext, status: number, contentType: string, text: string): void {
  ctx.status = status;
  ctx.set('Content-Type', contentType);
  ctx.body = text;
}

/**
 * The spec 4.5 label of the route that matched, or undefined. Read from the layers the router matched
 * rather than `ctx._matchedRoute`: @koa/router overwrites that with each layer it runs, so when the
 * protected group's authentication rejects, it holds the group middleware's path `(?:\/|$)`.
 */
export function matchedRouteLabel(ctx: KoaContext): string | undefined {
  if (ctx.routeMatched !== true) return undefined;
  const layer = ctx.matched?.findLast((candidate) => candidate.methods.includes(ctx.method));
  if (layer === undefined || typeof layer.path !== 'string') return undefined;
  return routeLabel(ctx.method, toBracePattern(layer.path));
}
