/**
 * How a request path is matched against the route table (PUBLIC_ROUTES and PROTECTED_ROUTES, beside the
 * operations in api.ts) and the contract routes, for every HTTP transport. Paths use the spec's brace form,
 * which is also the metrics/span route label (spec 4.5).
 */

export type Method = 'GET' | 'POST';

/** The route label of spec 4.5: `GET /orders/{id}`. */
export function routeLabel(method: string, path: string): string {
  return `${method} ${path}`;
}

/** The Allow header of a 405 from the methods of the routes on that path: HEAD follows GET (rule HTTP-head). */
export function allowHeader(routeMethods: readonly string[]): string {
  const methods = [...new Set(routeMethods.filter((method) => method !== 'HEAD'))];
  const get = methods.indexOf('GET');
  if (get >= 0) methods.splice(get + 1, 0, 'HEAD');
  return methods.join(', ');
}

/** `/orders/{id}` → `/orders/:id` for @koa/router, which uses the colon form. */
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

/**
 * `/orders/{id}` → /^\/orders\/(?<id>[^/]+)$/: a `{name}` is one non-empty segment (URLPattern's default), the
 * rest literal; case-sensitive, no trailing-slash tolerance, as @koa/router with `strict` and `sensitive`.
 */
export function compilePath(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (/^\{\w+\}$/.test(segment) ? `(?<${segment.slice(1, -1)}>[^/]+)` : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('\\/');
  return new RegExp(`^${source}$`);
}

/** A table entry: a method and a path in the brace form. */
export interface RoutePath {
  readonly method: string;
  readonly path: string;
}

/** A request's route and its decoded path parameters, or the methods its path's routes serve (none: 404). */
export type RouteMatch<R> =
  | { readonly route: R; readonly params: Readonly<Record<string, string>> }
  | { readonly route: undefined; readonly allowed: readonly string[] };

/**
 * Routes matched in the order they were added: orders-stdlib dispatches on it; orders-koa labels on it a
 * request its rate limiter refused before @koa/router saw it (rule METRICS-429-route).
 */
export class RouteTable<R extends RoutePath> {
  readonly #entries: { readonly route: R; readonly pattern: RegExp }[] = [];

  constructor(routes: Iterable<R> = []) {
    for (const route of routes) this.add(route);
  }

  add(route: R): void {
    this.#entries.push({ route, pattern: compilePath(route.path) });
  }

  /** The first route whose path matches and whose method serves the request's (a GET route serves HEAD, rule HTTP-head). */
  match(method: string, path: string): RouteMatch<R> {
    const allowed: string[] = [];
    for (const { route, pattern } of this.#entries) {
      const found = pattern.exec(path);
      if (found === null) continue;
      if (route.method === method || (route.method === 'GET' && method === 'HEAD')) return { route, params: decodeParams(found.groups) };
      allowed.push(route.method);
    }
    return { route: undefined, allowed };
  }

  /** The spec 4.5 label of the route a request is for, or undefined when none serves it. */
  label(method: string, path: string): string | undefined {
    const { route } = this.match(method, path);
    return route === undefined ? undefined : routeLabel(method, route.path);
  }
}

/** Parameters decoded as @koa/router does, so both transports see the same id; a malformed escape stays, and fails validation. */
function decodeParams(groups: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries(groups).map(([name, value]) => {
      try {
        return [name, decodeURIComponent(value)];
      } catch {
        return [name, value];
      }
    }),
  );
}
