import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderOpenapiModule } from '../../scripts/embed-openapi.ts';
import { OPENAPI_YAML } from '../../src/gen/openapi-document.ts';
import { openapiOperations } from './openapi-operations.ts';

/**
 * Spec 4.1 table, restated by hand so the document is checked against the spec, not against itself:
 * success status plus the listed error statuses.
 */
const SPEC_4_1_STATUSES: Record<string, { method: string; path: string; statuses: number[] }> = {
  login: { method: 'POST', path: '/auth/login', statuses: [200, 400, 401] },
  // 422: a reused Idempotency-Key (spec/rules.yaml IDEM-mismatch), beyond the spec's table.
  createOrder: { method: 'POST', path: '/orders', statuses: [201, 400, 401, 422] },
  getOrder: { method: 'GET', path: '/orders/{id}', statuses: [200, 400, 401, 403, 404] },
  listOrders: { method: 'GET', path: '/orders', statuses: [200, 401] },
  recent: { method: 'GET', path: '/me/recent', statuses: [200, 401, 503] },
};
/** Spec 4.1 rule 10: 429 on every operation. */
const EVERY_OPERATION = [429];
/**
 * Beyond the spec table (rule OPENAPI-statuses): 500 (panic recovery, spec 4.3 rule 1) everywhere, and the
 * answers given before any operation runs (rules HTTP-parser-errors, HTTP-host-header): 400, 408, 413, 417,
 * 431; 415 (rules HTTP-json-content-type, HTTP-content-encoding) on bodies.
 */
const EXTRA_EVERYWHERE = [400, 408, 413, 417, 431, 500];
const EXTRA_ON_BODIES = [415];
/** Answered by the HTTP/1.1 server before the rate limiter sees the request: no RateLimit-* set. */
const BEFORE_THE_LIMITER = ['408', '417', '431'];
/** Headers a response declares beside the rate-limit set (rules HTTP-401-challenge, HTTP-content-encoding). */
const MORE_HEADERS: Readonly<Record<string, readonly string[]>> = { '401': ['WWW-Authenticate'], '415': ['Accept-Encoding'] };

const SPEC_7_MESSAGES = [
  'malformed request body',
  'invalid order id',
  'missing or malformed Authorization header',
  'invalid or expired token',
  'invalid credentials',
  'forbidden',
  'not found',
  'session unavailable',
  'rate limit exceeded',
  'request body too large',
  'internal server error',
];

type Json = Record<string, unknown>;
const document = parse(OPENAPI_YAML) as Json;
/** $refs resolved (dereference rewrites the object it is given, so it gets a parse of its own). */
const dereferenced = (await SwaggerParser.dereference(parse(OPENAPI_YAML) as never)) as unknown as Json;
type Operation = Json & { responses: Record<string, Json> };
const operationsOf = (doc: Json): Map<string, Operation> => {
  const byId = new Map<string, Operation>();
  for (const item of Object.values(doc.paths as Record<string, Record<string, Operation>>)) {
    for (const op of Object.values(item)) byId.set(op.operationId as string, op);
  }
  return byId;
};
const expectedStatuses = (method: string, base: number[]): number[] =>
  [...new Set([...base, ...EVERY_OPERATION, ...EXTRA_EVERYWHERE, ...(method === 'POST' ? EXTRA_ON_BODIES : [])])].sort((a, b) => a - b);

describe('openapi/openapi.yaml embedding (spec 9 rule 3)', () => {
  // npm run check:generated also regenerates src/gen and compares; this is the quick signal in npm test.
  it('the embedded OPENAPI_YAML is byte-identical to openapi/openapi.yaml', () => {
    const source = readFileSync(join(import.meta.dirname, '..', '..', 'openapi', 'openapi.yaml'), 'utf8');
    expect(OPENAPI_YAML === source, 'embedded contract is stale: run `npm run openapi:embed`').toBe(true);
  });

  it('the rendering round-trips awkward text byte for byte', async () => {
    const text = 'a: "quoted" \\ back\n\n  tab\there\r\nunicode: é ✓\n';
    const module = renderOpenapiModule(text);
    const url = `data:text/javascript,${encodeURIComponent(module.replace(': string', ''))}`;
    const loaded = (await import(/* @vite-ignore */ url)) as { OPENAPI_YAML: string };
    expect(loaded.OPENAPI_YAML).toBe(text);
  });
});

// Validity (the 3.1 structure, known schema types, required fields among the properties, resolvable
// $refs) is Redocly's recommended ruleset in contract-client.test.ts, which also shows that it can fail.
describe('operations and statuses (spec 4.1 table and rule 10)', () => {
  for (const [operationId, row] of Object.entries(SPEC_4_1_STATUSES)) {
    it(`${operationId}: declares the spec 4.1 statuses plus 429 (and 500, 413 and 415 on bodies), nothing else`, () => {
      const op = openapiOperations().find((o) => o.operationId === operationId);
      expect(op).toMatchObject({ method: row.method, path: row.path, statuses: expectedStatuses(row.method, row.statuses) });
    });
  }

  it('every documented error message of spec 7 appears in the document', () => {
    for (const message of SPEC_7_MESSAGES) expect(OPENAPI_YAML).toContain(message);
  });

  it('every response declares the rate-limit header set (429 adds Retry-After >= 1, rule RATE-headers); 429, 413 and 415 carry their messages', () => {
    for (const [id, op] of operationsOf(dereferenced)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, { headers?: Record<string, { schema: Json }> }>)) {
        const headers = response.headers ?? {};
        const limiter = BEFORE_THE_LIMITER.includes(status) ? [] : ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
        expect(Object.keys(headers).sort(), `${id} ${status}`).toEqual(
          [...limiter, ...(status === '429' ? ['Retry-After'] : []), ...(MORE_HEADERS[status] ?? [])].sort(),
        );
        for (const [name, header] of Object.entries(headers)) {
          expect(header.schema.type, `${id} ${status} ${name}`).toBe(/^(RateLimit|Retry)/.test(name) ? 'integer' : 'string');
        }
        if (limiter.length > 0) expect(headers['RateLimit-Reset']!.schema.minimum, `${id} ${status}`).toBe(1);
        if (status === '429') expect(headers['Retry-After']!.schema.minimum).toBe(1);
      }
      const json = (status: string): Json | undefined =>
        (op.responses[status] as { content: Record<string, Json> } | undefined)?.content['application/json'];
      // Login's 429 is also the login gate's (rule LOGIN-gate): both texts are examples there.
      const tooMany = json('429')!;
      const examples =
        tooMany.example !== undefined
          ? [tooMany.example]
          : Object.values(tooMany.examples as Record<string, { value: Json }>).map((e) => e.value);
      expect(examples).toContainEqual({ error: 'rate limit exceeded' });
      if (id === 'login') expect(examples).toContainEqual({ error: 'too many login attempts' });
      expect((tooMany.schema as Json).required).toEqual(['error']);
      const examplesOf = (status: string): unknown[] => {
        const media = json(status);
        if (media === undefined) return [];
        return media.example !== undefined
          ? [media.example]
          : Object.values(media.examples as Record<string, { value: Json }>).map((e) => e.value);
      };
      expect(examplesOf('413')).toEqual([{ error: 'request body too large' }]);
      expect(examplesOf('415')).toEqual(
        op.requestBody === undefined
          ? []
          : [{ error: 'Content-Type must be application/json' }, { error: 'Content-Encoding not supported' }],
      );
      expect(examplesOf('400')).toEqual(expect.arrayContaining([{ error: 'missing or duplicate Host header' }, { error: 'bad request' }]));
      expect(examplesOf('408')).toEqual([{ error: 'request timeout' }]);
      expect(examplesOf('417')).toEqual([{ error: 'expectation failed' }]);
      expect(examplesOf('431')).toEqual([{ error: 'request header fields too large' }]);
      // Rule LOGIN-required-fields-variant: the one status that differs by executable is declared as such.
      if (id === 'login') expect(examplesOf('400')).toContainEqual({ error: 'username and password are required' });
    }
  });
});

describe('schemas, parameters and security (spec 2.1, 4.1 rule 6, 5)', () => {
  type Schema = Json & { properties: Record<string, Json>; required: string[] };
  const s = (document.components as { schemas: Record<string, Schema> }).schemas;

  // Order.status's enum ['pending'] is conformance openapi-business-operations-only.
  it('every Order field is required, with its type and format', () => {
    const order = s.Order!;
    expect(order.properties.id).toMatchObject({ type: 'string', format: 'uuid' });
    expect(order.properties.quantity).toMatchObject({ type: 'integer' });
    expect(order.properties.created_at).toMatchObject({ type: 'string', format: 'date-time' });
    expect([...order.required].sort()).toEqual(['created_at', 'id', 'item', 'quantity', 'status']);
  });

  it('the shapes of spec 2.1 exist with their required fields', () => {
    expect(s.LoginRequest!.required).toEqual(['username', 'password']);
    expect(s.LoginResponse!.required).toEqual(['token']);
    expect(s.CreateOrderRequest!.required).toEqual(['item', 'quantity']);
    expect(s.CreateOrderRequest!.properties.quantity).toMatchObject({ type: 'integer' });
    expect(s.ListOrdersResponse!.required).toEqual(['orders']);
    expect(s.ListOrdersResponse!.properties.orders).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/Order' },
    });
    expect(s.RecentResponse!.required).toEqual(['recent']);
    expect(s.RecentResponse!.properties.recent).toMatchObject({
      type: 'array',
      items: { type: 'string', format: 'uuid' },
    });
    expect(s.Error!.required).toEqual(['error']);
    expect(s.Error!.properties.error).toMatchObject({ type: 'string' });
  });

  it('limit and offset carry their defaults; the path id is a uuid', () => {
    const ops = operationsOf(dereferenced);
    const params = ops.get('listOrders')!.parameters as Array<Json & { schema: Json }>;
    const byName = Object.fromEntries(params.map((p) => [p.name, p]));
    // Any text is tolerated (spec 4.1 rule 6), so the schema admits a string beside the integer (rule OPENAPI-exact).
    const anyText = [{ type: 'integer' }, { type: 'string' }];
    expect(byName.limit).toMatchObject({ in: 'query', schema: { anyOf: anyText, default: 20 } });
    expect(byName.offset).toMatchObject({ in: 'query', schema: { anyOf: anyText, default: 0 } });
    expect(byName.limit!.description).toMatch(/> 100/);
    const id = (ops.get('getOrder')!.parameters as Json[])[0];
    expect(id).toMatchObject({ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } });
  });

  // Which operations require it (login alone does not): conformance openapi-business-operations-only.
  it('bearerAuth is HTTP bearer JWT', () => {
    expect((document.components as Record<string, Json>).securitySchemes!.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
  });
});

describe('openapiOperations()', () => {
  it('follows the document it is given and refuses status ranges', () => {
    const doc = [
      'openapi: 3.1.0',
      'paths:',
      '  /x:',
      '    delete:',
      '      operationId: dropX',
      "      responses: { '204': { description: ok }, '4XX': { description: bad } }",
    ].join('\n');
    expect(() => openapiOperations(doc)).toThrow(/4XX/);
    expect(openapiOperations(doc.replace(", '4XX': { description: bad }", ''))).toEqual([
      { method: 'DELETE', path: '/x', operationId: 'dropX', statuses: [204], authenticated: false },
    ]);
  });
});
