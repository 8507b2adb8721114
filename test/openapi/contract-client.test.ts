import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lint, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OPENAPI_YAML } from '../../src/gen/openapi-document.ts';
import type { paths } from '../../src/gen/openapi-types.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { REPO_ROOT, TRANSPORTS } from '../support/transports.ts';
import { openapiOperations } from './openapi-operations.ts';

type Json = Record<string, unknown>;
interface ResponseObject {
  headers?: Record<string, { schema: Json }>;
  content?: Record<string, { schema: Json }>;
}
interface OperationObject {
  operationId: string;
  parameters?: { in: string; required?: boolean }[];
  requestBody?: unknown;
  responses: Record<string, ResponseObject>;
}
type DocumentObject = { paths: Record<string, Record<string, OperationObject>> };

/** The served contract, $refs resolved, and a JSON Schema 2020-12 validator (OpenAPI 3.1's dialect). */
const document = (await SwaggerParser.dereference(parse(OPENAPI_YAML) as never)) as unknown as DocumentObject;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addFormat('password', true);

/** One exchange as the client saw it. */
interface Seen {
  readonly operationId: string;
  readonly status: number;
}

/**
 * Every response a generated typed client (openapi-typescript + openapi-fetch) gets is
 * declared by the document for its operation and status, its body validates against the declared
 * schema, and every header it declares for that response is present and valid.
 */
function conforms(template: string, method: string, response: Response, body: unknown): Seen {
  const operation = document.paths[template]?.[method.toLowerCase()];
  if (operation === undefined) throw new Error(`${method} ${template} is not in the document`);
  const declared = operation.responses[String(response.status)];
  expect(declared, `${operation.operationId}: status ${response.status} is not declared`).toBeDefined();
  const schema = declared!.content?.['application/json']?.schema;
  if (schema !== undefined) {
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const validate = ajv.compile(schema);
    expect(
      validate(body),
      `${operation.operationId} ${response.status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body)}`,
    ).toBe(true);
  }
  for (const [name, header] of Object.entries(declared!.headers ?? {})) {
    // The service sends every header the document declares for a response (rule RATE-headers), so none may be missing.
    const value = response.headers.get(name);
    expect(value, `${operation.operationId} ${response.status}: declared header ${name} missing`).not.toBeNull();
    const typed = header.schema['type'] === 'integer' ? Number(value) : value;
    expect(ajv.validate(header.schema, typed), `${operation.operationId} ${response.status}: header ${name}: ${value}`).toBe(true);
  }
  return { operationId: operation.operationId, status: response.status };
}

describe.each(TRANSPORTS.map((t) => [t.name, t] as const))('%s: the generated client against the document', (name, transport) => {
  let app: InProcessApp;
  beforeAll(async () => (app = await startInProcess({ transport: transport.factory, serviceName: `orders-${name}` })));
  afterAll(() => app.stop());

  it('calls every operation; every response matches the document (status, body, headers)', async () => {
    const client = createClient<paths>({ baseUrl: app.baseUrl });
    const seen: Seen[] = [];
    const check = async <R extends { response: Response; data?: unknown; error?: unknown }>(
      template: string,
      method: string,
      call: Promise<R>,
    ): Promise<R> => {
      const result = await call;
      seen.push(conforms(template, method, result.response, result.data ?? result.error));
      return result;
    };
    const [alice, bob] = [`contract-a-${name}`, `contract-b-${name}`];
    const passwords = [await app.addUser(alice), await app.addUser(bob)];

    const login = await check('/auth/login', 'POST', client.POST('/auth/login', { body: { username: alice, password: passwords[0]! } }));
    const other = await check('/auth/login', 'POST', client.POST('/auth/login', { body: { username: bob, password: passwords[1]! } }));
    await check('/auth/login', 'POST', client.POST('/auth/login', { body: { username: alice, password: 'wrong' } }));
    await check(
      '/auth/login',
      'POST',
      client.POST('/auth/login', { body: { username: alice, password: '' }, bodySerializer: () => '{"username":' }),
    );
    const auth = { Authorization: `Bearer ${login.data!.token}` };
    const otherAuth = { Authorization: `Bearer ${other.data!.token}` };

    const key = `"${crypto.randomUUID()}"`;
    const created = await check(
      '/orders',
      'POST',
      client.POST('/orders', { headers: auth, params: { header: { 'Idempotency-Key': key } }, body: { item: 'widget', quantity: 2 } }),
    );
    await check(
      '/orders',
      'POST',
      client.POST('/orders', { headers: auth, params: { header: { 'Idempotency-Key': key } }, body: { item: 'gadget', quantity: 2 } }),
    );
    await check('/orders', 'POST', client.POST('/orders', { headers: auth, body: { item: 'widget', quantity: 0 } }));
    await check('/orders', 'POST', client.POST('/orders', { body: { item: 'widget', quantity: 1 } }));
    await check(
      '/orders',
      'POST',
      client.POST('/orders', { headers: { ...auth, 'Content-Type': 'text/plain' }, body: { item: 'widget', quantity: 1 } }),
    );
    const id = created.data!.id;

    await check('/orders/{id}', 'GET', client.GET('/orders/{id}', { headers: auth, params: { path: { id } } }));
    await check('/orders/{id}', 'GET', client.GET('/orders/{id}', { headers: otherAuth, params: { path: { id } } }));
    await check('/orders/{id}', 'GET', client.GET('/orders/{id}', { headers: auth, params: { path: { id: crypto.randomUUID() } } }));
    await check('/orders/{id}', 'GET', client.GET('/orders/{id}', { headers: auth, params: { path: { id: 'not-a-uuid' } } }));
    await check('/orders/{id}', 'GET', client.GET('/orders/{id}', { params: { path: { id } } }));

    const list = await check('/orders', 'GET', client.GET('/orders', { headers: auth, params: { query: { limit: 5, offset: 0 } } }));
    expect(list.data!.orders.map((o) => o.id)).toStrictEqual([id]);
    await check('/orders', 'GET', client.GET('/orders', { headers: { Authorization: 'Bearer not-a-token' } }));

    const recent = await check('/me/recent', 'GET', client.GET('/me/recent', { headers: auth }));
    expect(recent.data!.recent).toStrictEqual([id]);
    await check('/me/recent', 'GET', client.GET('/me/recent', {}));

    // An operation not called above that takes no input is called here as the document declares it: with
    // the token (its success status) and, when protected, without one (401). One that takes input fails
    // here until it is called above with its inputs.
    const generic: string[] = [];
    for (const op of openapiOperations().filter((o) => !seen.some((s) => s.operationId === o.operationId))) {
      const declared = document.paths[op.path]![op.method.toLowerCase()]!;
      const inputs = [
        ...(declared.parameters ?? []).filter((p) => p.in === 'path' || p.required),
        ...(declared.requestBody ? ['body'] : []),
      ];
      expect(inputs, `${op.operationId} takes input: call it above with its inputs`).toStrictEqual([]);
      const success = op.statuses.filter((status) => status >= 200 && status < 300);
      expect(success, `${op.operationId}: one success status`).toHaveLength(1);
      // openapi-fetch's untyped entry (request) for a path known only at run time; conforms() checks the answer.
      const call = (headers: Record<string, string>) => client.request(op.method as 'get', op.path as never, { headers } as never);
      await check(op.path, op.method, call(op.authenticated ? auth : {}));
      generic.push(`${op.operationId} ${success[0]}`);
      if (op.authenticated) {
        await check(op.path, op.method, call({}));
        generic.push(`${op.operationId} 401`);
      }
    }

    // Every operation of the document was called, and the statuses each transport gave are the expected ones.
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(new Set(seen.map((s) => s.operationId))).toStrictEqual(new Set(operations));
    expect(seen.map((s) => `${s.operationId} ${s.status}`)).toStrictEqual([
      'login 200',
      'login 200',
      'login 401',
      'login 400',
      'createOrder 201',
      'createOrder 422',
      'createOrder 400',
      'createOrder 401',
      'createOrder 415',
      'getOrder 200',
      'getOrder 403',
      'getOrder 404',
      'getOrder 400',
      'getOrder 401',
      'listOrders 200',
      'listOrders 401',
      'recent 200',
      'recent 401',
      ...generic,
    ]);
  });
});

describe('openapi/openapi.yaml lint', () => {
  it("has no problem under Redocly's recommended ruleset (errors and warnings)", async () => {
    const problems = await lint({
      ref: join(REPO_ROOT, 'openapi', 'openapi.yaml'),
      config: await createConfig({ extends: ['recommended'] }),
    });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`)).toStrictEqual([]);
  });

  it('reports a misspelt schema type, a required field missing from the properties and a dangling $ref (so the check above can fail)', async () => {
    const broken = parse(OPENAPI_YAML) as { components: { schemas: Record<string, { type: string; required: string[] }> } };
    broken.components.schemas['Error']!.type = 'strin';
    broken.components.schemas['LoginResponse']!.required.push('tokn');
    delete broken.components.schemas['Order'];
    const problems = await lintFromString({
      source: JSON.stringify(broken),
      absoluteRef: join(REPO_ROOT, 'broken.json'),
      config: await createConfig({ extends: ['recommended'] }),
    });
    expect(problems.map((p) => p.ruleId)).toEqual(
      expect.arrayContaining(['struct', 'no-required-schema-properties-undefined', 'no-unresolved-refs']),
    );
  });
});
