/**
 * orders-koa's routes: the spec's route table (http/rest/routes.ts) registered on @koa/router with
 * router.get/post, each route's middleware in the order it runs (authentication, then the operation).
 * Login and the contract documents need no authentication; every route of PROTECTED_ROUTES authenticates
 * first (spec 4.1 rule 1), and only once the route matched path and method, so an unknown path is still
 * 404 and a wrong method 405, not 401.
 */
import { Router } from '@koa/router';
import { ErrValidation } from '../../domain/errors.ts';
import { authenticate, ErrMissingCredentials } from '../../service/authenticate.ts';
import type { TokenService } from '../../service/token-service.ts';
import { CONTRACT_ROUTES } from '../http/docs/contract-routes.ts';
import type { ProtectedOperation, PublicOperation, RestApi, RestRequest } from '../http/rest/api.ts';
import { decodeLoginRequest } from '../http/rest/dto.ts';
import { authorizationHeader, clientKey, readBody } from '../http/rest/request.ts';
import { PROTECTED_ROUTES, PUBLIC_ROUTES, RouteTable, toColonPattern, type Method, type RoutePath } from '../http/rest/routes.ts';
import { sendJson, sendStatic, type KoaContext, type KoaMiddleware, type KoaState } from './context.ts';

/** This variant's answer to spec 4.1 rule 9 (login required fields): 400 with this text. */
const LOGIN_FIELDS_REQUIRED = 'username and password are required';

/** The router and the table of the same routes, on which the rate limiter labels a request it refused. */
export interface KoaRoutes {
  readonly router: Router<KoaState>;
  readonly table: RouteTable<RoutePath>;
}

export function createRoutes(api: RestApi, tokens: TokenService): KoaRoutes {
  // Case-sensitive, no trailing-slash tolerance: the same paths match as on orders-stdlib.
  const router = new Router<KoaState>({ strict: true, sensitive: true });
  const table = new RouteTable<RoutePath>();
  const add = (method: Method, path: string, ...middleware: KoaMiddleware[]): void => {
    // @koa/router answers HEAD on a GET route by running it (rule HTTP-head).
    if (method === 'GET') router.get(toColonPattern(path), ...middleware);
    else router.post(toColonPattern(path), ...middleware);
    table.add({ method, path });
  };
  for (const route of PUBLIC_ROUTES) {
    const guards = route.operation === 'login' ? [loginValidation()] : [];
    add(route.method, route.path, ...guards, publicHandler(api[route.operation]));
  }
  for (const route of CONTRACT_ROUTES) add('GET', route.path, (ctx) => sendStatic(ctx, route.reply(ctx.get('if-none-match') || undefined)));
  for (const route of PROTECTED_ROUTES) add(route.method, route.path, authentication(tokens), protectedHandler(api[route.operation]));
  return { router, table };
}

/** The shared authentication step (spec 5 rule 6): the caller goes on `ctx.state` for the operation. */
function authentication(tokens: TokenService): KoaMiddleware {
  return async (ctx, next) => {
    ctx.state.principal = await authenticate(authorizationHeader(ctx.req), tokens);
    await next();
  };
}

function publicHandler(operation: PublicOperation): KoaMiddleware {
  return async (ctx) => {
    const result = await operation(toRestRequest(ctx));
    sendJson(ctx, result.status, result.body);
  };
}

/** The operation for the caller the authentication step left; without one it is refused, never served anonymously. */
function protectedHandler(operation: ProtectedOperation): KoaMiddleware {
  return async (ctx) => {
    const { principal } = ctx.state;
    if (principal === undefined) throw new ErrMissingCredentials();
    const result = await operation(toRestRequest(ctx), principal);
    sendJson(ctx, result.status, result.body);
  };
}

/**
 * Spec 2.1 (router-framework variant): an empty username or password is refused before the handler
 * runs. ErrValidation, so the one error table answers 400 with this text; undecodable JSON still fails in
 * decodeLoginRequest as 400 `malformed request body`.
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

function toRestRequest(ctx: KoaContext): RestRequest {
  const { body, done } = ctx.state;
  if (done === undefined) throw new Error('koa: no done signal on the request (middleware.ts doneSignal)');
  return {
    params: ctx.params,
    query: new URLSearchParams(ctx.querystring),
    signal: done,
    readBody: () => (body !== undefined ? Promise.resolve(body) : readBody(ctx.req)),
    headers: ctx.req.headers,
    client: clientKey(ctx.req),
  };
}
