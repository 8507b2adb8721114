/**
 * orders-stdlib's router: the spec's route table (http/rest/api.ts) dispatched on node:http. Whether a
 * route authenticates is where it is registered (spec 4.1 rule 1). It checks Host first (rule
 * HTTP-host-header), answers 404 and 405 itself, and a handler's error from the one error table.
 */
import { authenticate } from '../../service/authenticate.ts';
import { httpErrorAnswer } from '../errors/table.ts';
import { CONTRACT_ROUTES } from '../http/docs/contract-routes.ts';
import { PROTECTED_ROUTES, PUBLIC_ROUTES, type RestParts, type RestRequest, type RestResult } from '../http/rest/api.ts';
import { authorizationHeader, checkHostHeader, restRequest } from '../http/rest/request.ts';
import { allowHeader, routeLabel, RouteTable } from '../http/rest/routes.ts';
import { sendError, sendJson, type Exchange, type Handler } from './middleware.ts';

interface Route {
  readonly method: string;
  /** The brace form: the label, with the request's own method (a HEAD on a GET route is `HEAD …`). */
  readonly path: string;
  readonly handler: (exchange: Exchange, params: Readonly<Record<string, string>>) => Promise<void>;
}

export interface Router {
  readonly handle: Handler;
  /** The label of the route `handle` would run, without running it (a refused request's metrics). */
  readonly routeLabel: (method: string, path: string) => string | undefined;
}

export function createRouter({ api, tokens, observability: { logger } }: RestParts): Router {
  const routes = new RouteTable<Route>();
  const addOperation = (method: string, path: string, operation: (req: RestRequest, exchange: Exchange) => Promise<RestResult>): void =>
    routes.add({
      method,
      path,
      handler: async (exchange, params) => {
        const result = await operation(restRequest(exchange.req, params, exchange.query, exchange.signal), exchange);
        sendJson(exchange.res, result.status, result.body);
      },
    });
  for (const route of PUBLIC_ROUTES) addOperation(route.method, route.path, (req) => api[route.operation](req));
  // The shared authentication step (spec 5 rule 6), only once a route matched.
  for (const route of PROTECTED_ROUTES) {
    addOperation(route.method, route.path, async (req, exchange) => {
      const principal = await authenticate(authorizationHeader(exchange.req), tokens);
      return api[route.operation](req, principal);
    });
  }
  for (const route of CONTRACT_ROUTES) {
    routes.add({
      method: 'GET',
      path: route.path,
      handler: async ({ req, res }) => {
        const reply = route.reply(req.headers['if-none-match']);
        res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) }).end(reply.body);
      },
    });
  }

  const answerError = (exchange: Exchange, error: unknown): void => {
    const answer = httpErrorAnswer(error, logger, exchange.path, exchange.req.httpVersionMajor >= 2);
    sendError(exchange.res, answer.status, answer.message, answer.headers);
  };
  const handle: Handler = async (exchange) => {
    try {
      checkHostHeader(exchange.req);
    } catch (error) {
      return answerError(exchange, error);
    }
    const match = routes.match(exchange.method, exchange.path);
    if (match.route === undefined) {
      if (match.allowed.length > 0) sendError(exchange.res, 405, 'method not allowed', { allow: allowHeader(match.allowed) });
      else sendError(exchange.res, 404, 'not found');
      return;
    }
    exchange.route = routeLabel(exchange.method, match.route.path);
    try {
      await match.route.handler(exchange, match.params);
    } catch (error) {
      answerError(exchange, error);
    }
  };
  return { handle, routeLabel: (method, path) => routes.label(method, path) };
}
