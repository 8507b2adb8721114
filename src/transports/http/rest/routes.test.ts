import { describe, expect, it } from 'vitest';
import { PROTECTED_ROUTES, PUBLIC_ROUTES } from './api.ts';
import { compilePath, OPENAPI_PATH, RouteTable, SWAGGER_PATH, toColonPattern } from './routes.ts';

const PATHS: string[] = [...[...PUBLIC_ROUTES, ...PROTECTED_ROUTES].map((r): string => r.path), OPENAPI_PATH, SWAGGER_PATH];
const SAMPLES = [
  '/',
  '/orders',
  '/orders/',
  '/orders/7c9e6679-7425-40de-944b-e07fc1f90ae7',
  '/orders/a%2Fb',
  '/orders/a/b',
  '/ORDERS',
  '/auth/login',
  '/auth/login/',
  '/me/recent',
  '/me',
  '/openapi.yaml',
  '/openapiXyaml',
  '/swagger/',
  '/swagger',
  '/orders/%E2%82%AC',
];

describe('compilePath: the same matches and parameters as URLPattern', () => {
  for (const path of PATHS) {
    it(path, () => {
      const reference = new URLPattern({ pathname: toColonPattern(path) });
      const compiled = compilePath(path);
      for (const sample of SAMPLES) {
        const expected = reference.exec({ pathname: sample })?.pathname.groups;
        const actual = compiled.exec(sample)?.groups;
        expect({ sample, matched: compiled.test(sample) }).toEqual({ sample, matched: expected !== undefined });
        if (expected !== undefined) expect({ ...(actual ?? {}) }).toEqual({ ...expected });
      }
    });
  }
});

describe('a path without parameters matches itself only', () => {
  for (const path of PATHS.filter((p) => !p.includes('{'))) {
    it(path, () => {
      for (const sample of SAMPLES)
        expect({ sample, matched: compilePath(path).test(sample) }).toEqual({ sample, matched: sample === toColonPattern(path) });
    });
  }
});

describe('compilePath: a parameter is a whole segment', () => {
  it('[HTTP-404-unknown] a colon inside a segment, or a parameter name followed by more, is matched literally', () => {
    expect(compilePath('/a:b').test('/a:b')).toBe(true);
    expect(compilePath('/a:b').test('/ax')).toBe(false);
    expect(compilePath('/x/:id.json').test('/x/:id.json')).toBe(true);
    expect(compilePath('/x/:id.json').test('/x/7.json')).toBe(false);
  });
});

describe('RouteTable', () => {
  const table = new RouteTable([...PUBLIC_ROUTES, ...PROTECTED_ROUTES]);

  it('[METRICS-route-label, METRICS-unmatched] labels a request with its own method and the brace path, or not at all', () => {
    expect(table.label('GET', '/orders/7c9e6679-7425-40de-944b-e07fc1f90ae7')).toBe('GET /orders/{id}');
    expect(table.label('HEAD', '/orders')).toBe('HEAD /orders');
    expect(table.label('PUT', '/orders')).toBeUndefined();
    expect(table.label('GET', '/orders/a/b')).toBeUndefined();
  });

  it('[HTTP-405-method, HTTP-404-unknown] without a route for the method, gives the methods of the path, none for an unknown path', () => {
    expect(table.match('DELETE', '/orders')).toStrictEqual({ route: undefined, allowed: ['POST', 'GET'] });
    expect(table.match('GET', '/auth/login')).toStrictEqual({ route: undefined, allowed: ['POST'] });
    expect(table.match('GET', '/nowhere')).toStrictEqual({ route: undefined, allowed: [] });
    expect(table.match('GET', '/orders/a%2Fb')).toMatchObject({ route: { operation: 'getOrder' }, params: { id: 'a/b' } });
  });
});
