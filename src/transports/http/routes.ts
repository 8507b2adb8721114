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

/** `/orders/{id}` → `/orders/:id` for routers that use the colon form (URLPattern, @koa/router). */
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
