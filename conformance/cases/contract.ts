import { parse } from 'yaml';
import { OPENAPI_YAML } from '../../src/gen/openapi-document.ts';
import { openapiOperations, type OpenapiOperation } from '../../test/openapi/openapi-operations.ts';
import { flow, type Case } from '../case-model.ts';
import { OPERATIONS, type RawRequest } from '../drivers/driver.ts';
import { MSG, restCase } from './messages.ts';

/** The served contract (spec 4.1 table and rule 10, 9 rules 2-4); the docs page is in docs-page.ts. */

/**
 * Spec 4.1 table statuses per operation, plus 429 (rule 10). An operation beyond the table declares a
 * success, 401 (every one but login is protected) and 429.
 */
const TABLE: Readonly<Record<string, readonly number[]>> = {
  'POST /auth/login': [200, 400, 401, 429],
  'POST /orders': [201, 400, 401, 429],
  'GET /orders/{id}': [200, 400, 401, 403, 404, 429],
  'GET /orders': [200, 401, 429],
  'GET /me/recent': [200, 401, 429, 503],
};

/** A request for a documented operation: a fresh UUID for `{id}`, `{}` as a POST body, these headers. */
export function documentedRequest(op: OpenapiOperation, headers: Readonly<Record<string, string>> = {}): RawRequest {
  return {
    method: op.method,
    path: op.path.replace('{id}', crypto.randomUUID()),
    headers: { 'content-type': 'application/json', ...headers },
    ...(op.method === 'POST' ? { body: '{}' } : {}),
  };
}

function templateMatches(template: string, path: string): boolean {
  const pattern = new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`);
  return pattern.test(path);
}

/** A parameter's schema in the served contract, by the parameter's name (components/parameters). */
function parameterSchema(documentText: string, name: string): { pattern?: string; minLength?: number; maxLength?: number } {
  const doc = parse(documentText) as {
    components?: { parameters?: Record<string, { name?: string; schema?: { pattern?: string; minLength?: number; maxLength?: number } }> };
  };
  const parameter = Object.values(doc.components?.parameters ?? {}).find((p) => p.name === name);
  if (parameter?.schema === undefined) throw new Error(`the contract declares no parameter ${name}`);
  return parameter.schema;
}

/** JSON Schema's string keywords (pattern, minLength, maxLength), as a client generated from the contract checks them. */
function admits(schema: { pattern?: string; minLength?: number; maxLength?: number }, value: string): boolean {
  return (
    value.length >= (schema.minLength ?? 0) &&
    value.length <= (schema.maxLength ?? Infinity) &&
    (schema.pattern === undefined || new RegExp(schema.pattern, 'u').test(value))
  );
}

/** Rule OPENAPI-exact: what the service accepts and what the contract admits are the same values. */
const EXACT_CASES: Case[] = [
  flow('idempotency-key-contract-admits-what-the-service-accepts', ['OPENAPI-exact', 'IDEM-format'], { api: 'rest' }, async (t) => {
    const schema = parameterSchema((await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' })).text ?? '', 'Idempotency-Key');
    const me = await t.user();
    // A key of this run (an external target's users keep their keys for 24 hours), then escaped characters: the
    // longest quoted key is a field of up to 512 characters, here 2 + 32 + 2 × 223 = 480.
    const unique = crypto.randomUUID().replaceAll('-', '');
    const escaped = (characters: number) => `"${unique}${'\\"'.repeat(characters - unique.length)}"`;
    const values: readonly (readonly [string, string, boolean])[] = [
      ['255 characters, escaped after the first 32', escaped(255), true],
      ['255 bare characters', unique + 'k'.repeat(255 - unique.length), true],
      ['256 characters quoted', escaped(256), false],
      ['256 bare characters', unique + 'k'.repeat(256 - unique.length), false],
      ['an empty quoted string', '""', false],
      ['a quoted string with an unknown escape', '"key\\n"', false],
    ];
    for (const [label, value, valid] of values) {
      t.assert(admits(schema, value) === valid, `the contract ${valid ? 'refuses' : 'admits'} ${label} (${value.length} characters)`);
      const reply = await t.driver.raw!({
        method: 'POST',
        path: '/orders',
        headers: { 'content-type': 'application/json', authorization: me.auth, 'idempotency-key': value },
        body: '{"item":"widget","quantity":1}',
      });
      t.check(
        reply,
        { http: valid ? { status: 201, body: { shape: 'Order' } } : { status: 400 } },
        `${label} (${value.length} characters)`,
      );
    }
  }),
  flow(
    'unparsable-page-parameters-are-in-the-contract',
    ['OPENAPI-exact', 'LIST-limit-default', 'LIST-offset-default'],
    { api: 'rest' },
    async (t) => {
      const doc = parse((await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' })).text ?? '') as {
        components?: { parameters?: Record<string, { name?: string; schema?: { anyOf?: readonly { type?: string }[] } }> };
      };
      for (const name of ['limit', 'offset']) {
        const schema = Object.values(doc.components?.parameters ?? {}).find((p) => p.name === name)?.schema;
        const types = (schema?.anyOf ?? []).map((s) => s.type);
        t.assert(types.includes('integer') && types.includes('string'), `${name}'s schema admits ${JSON.stringify(types)}, not any text`);
      }
      const me = await t.user();
      t.check(
        await t.driver.listOrders(me.auth, { limit: 'abc', offset: 'xyz' }),
        { http: { status: 200, body: { shape: 'ListOrdersResponse' } } },
        'limit=abc&offset=xyz',
      );
    },
  ),
];

export const CONTRACT_CASES: Case[] = [
  restCase(
    'openapi-document-served',
    ['OPENAPI-served', 'VER-3-openapi-embedded', 'AUTH-9-public', 'SVC-two-listeners'],
    { method: 'GET', path: '/openapi.yaml' },
    { status: 200, textIncludes: ['openapi: 3.'] },
  ),
  flow('openapi-document-is-the-embedded-one', ['VER-3-openapi-embedded', 'OPENAPI-served'], { api: 'rest' }, async (t) => {
    const reply = await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' });
    t.check(reply, { http: { status: 200 } }, 'GET /openapi.yaml');
    t.assert(reply.text === OPENAPI_YAML, 'the served document differs from the one embedded in the executable');
    t.assert(/yaml/.test(reply.headers?.['content-type'] ?? ''), `content type ${reply.headers?.['content-type']} is not YAML`);
  }),
  flow(
    'openapi-business-operations-only',
    [
      'OPENAPI-business-only',
      'OPENAPI-statuses',
      'ERR-429-declared',
      'OPENAPI-order-status-enum',
      'AUTH-2-login-only',
      'ROUTE-auth-by-registration',
    ],
    { api: 'rest' },
    async (t) => {
      const reply = await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' });
      const operations = openapiOperations(reply.text ?? '');
      // The business API and nothing else: one documented operation per operation of the drivers' table, by its name.
      const documented = operations.map((o) => o.operationId).sort();
      const business = Object.keys(OPERATIONS).sort();
      t.assert(
        JSON.stringify(documented) === JSON.stringify(business),
        `documented operations are ${JSON.stringify(documented)}, expected the business API only (conformance/drivers/driver.ts OPERATIONS): ${JSON.stringify(business)}`,
      );
      const keys = operations.map((o) => `${o.method} ${o.path}`);
      const absent = Object.keys(TABLE).filter((key) => !keys.includes(key));
      t.assert(absent.length === 0, `the spec's ${absent.join(', ')} not documented`);
      for (const op of operations) {
        const key = `${op.method} ${op.path}`;
        const missing = (TABLE[key] ?? [401, 429]).filter((s) => !op.statuses.includes(s));
        t.assert(missing.length === 0, `${key} does not declare ${missing.join(', ')}`);
        t.assert(
          op.statuses.some((s) => s >= 200 && s < 300),
          `${key} declares no success status`,
        );
        t.assert(
          op.authenticated === (key !== 'POST /auth/login'),
          `${key} is ${op.authenticated ? '' : 'not '}authenticated in the document`,
        );
      }
      const doc = parse(reply.text ?? '') as { components?: { schemas?: { Order?: { properties?: { status?: { enum?: unknown } } } } } };
      const statusEnum = doc.components?.schemas?.Order?.properties?.status?.enum;
      t.assert(JSON.stringify(statusEnum) === '["pending"]', `Order.status enum is ${JSON.stringify(statusEnum)}, expected ["pending"]`);
    },
  ),
  flow(
    'every-protected-operation-requires-a-token',
    ['ROUTE-auth-by-registration', 'AUTH-2-login-only', 'SVC-same-api'],
    { api: 'rest' },
    async (t) => {
      for (const op of openapiOperations()) {
        const reply = await t.driver.raw!(documentedRequest(op));
        if (op.authenticated) {
          t.check(reply, { http: { status: 401, error: MSG.missingAuth } }, `${op.method} ${op.path} without a token`);
        } else {
          t.assert(
            reply.status !== 401 || (reply.body as { error?: string }).error !== MSG.missingAuth,
            `${op.method} ${op.path} asks for a token`,
          );
          t.assert(reply.status !== 404 && reply.status !== 405, `${op.method} ${op.path} is not routed (${reply.status})`);
        }
      }
    },
  ),
  flow('observed-statuses-are-declared', ['OPENAPI-statuses'], { api: 'rest', last: true }, async (t) => {
    const operations = openapiOperations();
    const undeclared = new Set<string>();
    let checked = 0;
    for (const seen of t.observed()) {
      const op = operations.find((o) => o.method === seen.method && templateMatches(o.path, seen.path));
      if (op === undefined) continue;
      checked += 1;
      if (!op.statuses.includes(seen.status)) undeclared.add(`${op.method} ${op.path} answered ${seen.status}`);
    }
    t.assert(checked > 0, 'no business exchanges were observed in this column');
    t.assert(undeclared.size === 0, `statuses not declared in the OpenAPI document: ${[...undeclared].join('; ')}`);
  }),
  restCase(
    'rest-paths-carry-no-version',
    ['VER-2-rest-unversioned'],
    { method: 'GET', path: '/v1/orders' },
    { status: 404, error: MSG.notFound },
    'Bearer {token}',
  ),
  flow('no-version-header', ['VER-2-rest-unversioned'], { api: 'rest' }, async (t) => {
    const me = await t.user();
    const replies = [await t.driver.listOrders(me.auth, {}), await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' })];
    for (const reply of replies) {
      const versioned = Object.keys(reply.headers ?? {}).filter((h) => /version/i.test(h));
      t.assert(versioned.length === 0, `response carries version headers: ${versioned.join(', ')}`);
    }
    const ignored = await t.driver.raw!({ method: 'GET', path: '/orders', headers: { authorization: me.auth, 'api-version': '2' } });
    t.check(ignored, { http: { status: 200 } }, 'a version header is not interpreted');
  }),
  flow('contract-is-version-1', ['VER-4-deprecation'], { api: 'rest' }, async (t) => {
    const doc = parse((await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' })).text ?? '') as { info?: { version?: string } };
    t.assert(/^1\./.test(doc.info?.version ?? ''), `OpenAPI info.version is ${doc.info?.version}, expected 1.x`);
  }),
  ...EXACT_CASES,
];
