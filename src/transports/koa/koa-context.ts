import type { RouterContext, RouterMiddleware } from '@koa/router';
import { routeLabel, toBracePattern } from '../http/rest/routes.ts';
import type { StaticReply } from '../http/docs/static-reply.ts';

/** What our layers keep on `ctx.state` for one request. */
export interface KoaState {
  /** The login body, already read by the validation step, so the operation does not read the stream twice. */
  body?: string;
  /** Aborts when the response is finished or the connection dropped: the session lease's fallback. */
  done?: AbortSignal;
  /** Set by the rate limiter when it refused the request: the route label the router would have matched. */
  throttledRoute?: string;
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
  ctx.res.setHeader('Content-Type', contentType);
  ctx.body = text;
}

/** Headers first: Koa keeps a content type that is already set, for a Buffer body too. */
export function sendStatic(ctx: KoaContext, reply: StaticReply): void {
  ctx.status = reply.status;
  ctx.set(reply.headers);
  ctx.body = reply.body;
}

/**
 * The spec 4.5 label of the route that matched, or undefined. Read from the layers the router matched
 * rather than `ctx._matchedRoute`: @koa/router overwrites that with each layer it runs, so when the
 * protected group's authentication rejects, it holds the group middleware's path `(?:\/|$)`.
 */
export function matchedRouteLabel(ctx: KoaContext): string | undefined {
  if (ctx.state.throttledRoute !== undefined) return ctx.state.throttledRoute;
  // Unmatched (ctx.routeMatched not true) is no layer serving the method: @koa/router sets routeMatched
  // exactly when one of the layers it matched does.
  return routeLabelOfLayers(ctx.matched ?? [], ctx.method);
}

/** The label of the last of the matched layers that serves `method` (group middleware serves none). */
export function routeLabelOfLayers(
  layers: readonly { readonly methods: string[]; readonly path: unknown }[],
  method: string,
): string | undefined {
  const layer = layers.findLast((candidate) => candidate.methods.includes(method));
  if (layer === undefined || typeof layer.path !== 'string') return undefined;
  return routeLabel(method, BRACE_PATHS.get(layer.path) ?? braceOf(layer.path));
}

function braceOf(path: string): string {
  const brace = toBracePattern(path);
  // Bounded: the keys are the routers' own paths, a fixed set.
  BRACE_PATHS.set(path, brace);
  return brace;
}

/** Each route path's brace form, converted once (the regexp replace was ~1.5% of a Koa GET's CPU). */
const BRACE_PATHS = new Map<string, string>();
