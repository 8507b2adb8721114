import { describe, expect, it } from 'vitest';
import { OPENAPI_PATH, PROTECTED_ROUTES, PUBLIC_ROUTES, SWAGGER_PATH, toColonPattern } from '../http/rest/routes.ts';
import { compilePath } from './router.ts';

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

describe('compilePath: the same matches and parameters as URLPattern, which it replaces', () => {
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

describe('a path without parameters is matched by string equality: exactly what its compiled pattern accepts', () => {
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
