import type { RestApi } from './rest-api.ts';

/**
 * The business routes of spec 4.1, once, for every HTTP transport. Patterns use the spec's brace form,
 * which is also the metrics/span route label. Every route is protected unless it is in PUBLIC_ROUTES:
 * publishing one unauthenticated is an explicit edit here, never an omission (spec 4.1 rule 1).
 */
export type Method = 'GET' | 'POST';

export interface RouteDef {
  readonly method: Method;
  readonly path: string;
  readonly operation: keyof Pick<RestApi, 'login' | 'createOrder' | 'getOrder' | 'listOrders' | 'recent'>;
}

export const PUBLIC_ROUTES = [{ method: 'POST', path: '/auth/login', operation: 'login' }] as const satisfies readonly RouteDef[];

export const PROTECTED_ROUTES = [
  { method: 'POST', path: '/orders', operation: 'createOrder' },
  { method: 'GET', path: '/orders/{id}', operation: 'getOrder' },
  { method: 'GET', path: '/orders', operation: 'listOrders' },
  { method: 'GET', path: '/me/recent', operation: 'recent' },
] as const satisfies readonly RouteDef[];

/** The route label of spec 4.5: `GET /orders/{id}`. */
export function routeLabel(method: string, path: string): string {
  return `${method} ${path}`;
}

/**
 * RFC 9110 §9.1: a GET route answers HEAD too (the same status and headers, no body; rule
 * HTTP-head). Node's ServerResponse drops the body of a HEAD response itself.
 */
export function routeMatchesMethod(routeMethod: string, requestMethod: string): boolean {
  return routeMethod === requestMethod || (routeMethod === 'GET' && requestMethod === 'HEAD');
}

/** The Allow header of a 405 from the methods of the routes on that path: HEAD follows GET. */
export function allowHeader(routeMethods: readonly string[]): string {
  const methods = [...new Set(routeMethods.filter((method) => method !== 'HEAD'))];
  const get = methods.indexOf('GET');
  if (get >= 0) methods.splice(get + 1, 0, 'HEAD');
  return methods.join(', ');
}

/** `/orders/{id}` → `/orders/:id` for routers that use the colon form (stdlib/router.ts, @koa/router). */
export function toColonPattern(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** `/orders/:id` → `/orders/{id}`: labels never use the colon form. */
export function toBracePattern(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/** Contract routes (spec 4.1): public, not business operations. */
export const OPENAPI_PATH = '/openapi.yaml';
export const SWAGGER_PATH = '/swagger/';
