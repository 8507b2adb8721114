import { METHODS } from 'node:http';
import { Router } from '@koa/router';
import { ErrValidation } from '../../domain/errors.ts';
import { authenticate } from '../../service/authenticate.ts';
import type { TokenService } from '../../service/token-service.ts';
import { decodeLoginRequest } from '../http/rest/dto.ts';
import { CONTRACT_ROUTES } from '../http/docs/contract-routes.ts';
import { readBody } from '../http/rest/request-body.ts';
import { clientKey } from '../http/rest/client-key.ts';
import { authorizationHeader } from '../http/rest/request-headers.ts';
import type { ProtectedOperation, PublicOperation, RestApi, RestRequest } from '../http/rest/rest-api.ts';
import { PROTECTED_ROUTES, PUBLIC_ROUTES, toColonPattern, type Method } from '../http/rest/routes.ts';
import { sendJson, sendStatic, type KoaContext, type KoaMiddleware, type KoaState } from './koa-context.ts';

/** This variant's answer to spec 4.1 rule 9 (login required fields): 400 with this text. */
export const LOGIN_FIELDS_REQUIRED = 'username and password are required';

/**
 * Case-sensitive, no trailing-slash tolerance: the same paths match as on orders-stdlib's compiled
 * patterns (stdlib/router.ts). `methods` is what router.allowedMethods() counts as implemented: every
 * method node:http parses, so another method on a known path is 405 (spec 4.1) rather than 501, but
 * OPTIONS, which the router would otherwise answer 200 on its own (koa-middleware.ts jsonFallbacks).
 */
const ROUTER_OPTIONS = { strict: true, sensitive: true, methods: METHODS.toSpliced(METHODS.indexOf('OPTIONS'), 1) };

function toRestRequest(ctx: KoaContext): RestRequest {
  const { body } = ctx.state;
  const done = ctx.state.done ?? missingDoneSignal();
  return {
    params: ctx.params,
    query: new URLSearchParams(ctx.querystring),
    signal: done,
    readBody: () => (body !== undefined ? Promise.resolve(body) : readBody(ctx.req)),
    headers: ctx.req.headers,
    client: clientKey(ctx.req),
  };
}

function missingDoneSignal(): never {
  throw new Error('koa: no done signal on the request');
}

function publicHandler(operation: PublicOperation): KoaMiddleware {
  return async (ctx) => {
    const result = await operation(toRestRequest(ctx));
    sendJson(ctx, result.status, result.body);
  };
}

/**
 * A protected route's middleware (spec 4.1 rule 1): the shared authentication step (spec 5 rule 6)
 * first, then the operation, in one layer as on node:http (one async frame less per request).
 */
function protectedHandler(tokens: TokenService, operation: ProtectedOperation): KoaMiddleware {
  return async (ctx) => {
    const principal = await authenticate(authorizationHeader(ctx.req), tokens);
    const result = await operation(toRestRequest(ctx), principal);
    sendJson(ctx, result.status, result.body);
  };
}

/**
 * Spec 2.1 (router-framework variant): an empty username or password is refused before the handler
 * runs. ErrValidation, so the one error table (toHttpError) answers 400 with this text; undecodable JSON
 * still fails in decodeLoginRequest as 400 `malformed request body`.
 */
function loginValidation(): KoaMiddleware {
  return async (ctx, next) => {
    const body = await readBody(ctx.req);
    const { username, password } = decodeLoginRequest(body);
    if (username === '' || password === '') throw new ErrValidation(LOGIN_FIELDS_REQUIRED);
    ctx.state.body = body;
    await next();
  };
}

/** @koa/router answers HEAD on a GET route by running it (rule HTTP-head, as routes.ts routeMatchesMethod). */
function register(router: Router<KoaState>, method: Method, path: string, ...middleware: KoaMiddleware[]): void {
  router.register(toColonPattern(path), [method], middleware);
}

/**
 * The whole REST surface on one router (one match per request; two routers matched every request
 * twice). Login and the contract documents need no authentication. Spec 4.1 rule 1: every route of
 * PROTECTED_ROUTES is registered with protectedHandler, which authenticates before anything else; it
 * runs only when the route matched path and method, so an unknown path is still 404 and a wrong method
 * 405, not 401.
 */
export function createRouter(api: RestApi, tokens: TokenService): Router<KoaState> {
  const router = new Router<KoaState>(ROUTER_OPTIONS);
  for (const route of PUBLIC_ROUTES) {
    const guards = route.operation === 'login' ? [loginValidation()] : [];
    register(router, route.method, route.path, ...guards, publicHandler(api[route.operation]));
  }
  for (const route of CONTRACT_ROUTES) {
    register(router, 'GET', route.path, (ctx) => sendStatic(ctx, route.reply(ctx.get('if-none-match') || undefined)));
  }
  for (const route of PROTECTED_ROUTES) register(router, route.method, route.path, protectedHandler(tokens, api[route.operation]));
  return router;
}
