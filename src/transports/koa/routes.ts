/**
 * orders-koa's routes: the spec's route table (http/rest/api.ts) on @koa/router with router.get/post.
 * Login and the contract documents need no token; every route of PROTECTED_ROUTES authenticates first
 * (spec 4.1 rule 1), once the route matched path and method, so an unknown path is still 404 and a wrong
 * method 405, not 401.
 */
import { Router } from '@koa/router';
import { ErrValidation } from '../../domain/errors.ts';
import { authenticate } from '../../service/authenticate.ts';
import type { TokenService } from '../../service/token-service.ts';
import { CONTRACT_ROUTES } from '../http/docs/contract-routes.ts';
import { PROTECTED_ROUTES, PUBLIC_ROUTES, type RestApi, type RestRequest } from '../http/rest/api.ts';
import { decodeLoginRequest } from '../http/rest/dto.ts';
import { authorizationHeader, readBody, restRequest } from '../http/rest/request.ts';
import { RouteTable, toColonPattern, type Method, type RoutePath } from '../http/rest/routes.ts';
import { sendJson, sendStatic, type KoaContext, type KoaMiddleware, type KoaState } from './context.ts';

/** This variant's answer to spec 4.1 rule 9 (login required fields): 400 with this text. */
const LOGIN_FIELDS_REQUIRED = 'username and password are required';

/** The router, and the table of the same routes on which the rate limiter labels a request it refused. */
export function createRoutes(api: RestApi, tokens: TokenService): { router: Router<KoaState>; table: RouteTable<RoutePath> } {
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
    add(route.method, route.path, ...guards, async (ctx) => {
      const { status, body } = await api[route.operation](toRestRequest(ctx));
      sendJson(ctx, status, body);
    });
  }
  for (const route of CONTRACT_ROUTES) add('GET', route.path, (ctx) => sendStatic(ctx, route.reply(ctx.get('if-none-match') || undefined)));
  for (const route of PROTECTED_ROUTES) {
    add(route.method, route.path, async (ctx) => {
      // The shared authentication step (spec 5 rule 6).
      const principal = await authenticate(authorizationHeader(ctx.req), tokens);
      const { status, body } = await api[route.operation](toRestRequest(ctx), principal);
      sendJson(ctx, status, body);
    });
  }
  return { router, table };
}

/**
 * Spec 2.1 (router-framework variant): an empty username or password is refused before the handler runs,
 * as ErrValidation (400 with this text); undecodable JSON is still 400 `malformed request body`.
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
  return restRequest(ctx.req, ctx.params, new URLSearchParams(ctx.querystring), done, body);
}
