import { isDeepStrictEqual } from 'node:util';
import type { BodyExpect, Expectation, GrpcExpect, HttpExpect, ShapeName } from '../case-model.ts';
import type { Api, Reply } from '../drivers/driver.ts';
import type { RestVariant } from '../../test/support/transports.ts';

/** A failed expectation; the runner prefixes the case's rule IDs. */
export class CaseFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CaseFailure';
  }
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export type Resolve = <T>(value: T) => T;

function show(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value, (_k, v: unknown) => (v instanceof RegExp ? String(v) : v));
  return text === undefined ? String(value) : text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

function describeReply(reply: Reply): string {
  if (reply.api === 'grpc') return `gRPC ${reply.codeName ?? reply.code} ${show(reply.message)}${reply.body === undefined ? '' : ` ${show(reply.body)}`}`;
  return `HTTP ${reply.status} ${show(reply.text ?? '')}`;
}

function keysOf(value: unknown): string[] {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value).sort() : [];
}

function exactKeys(value: unknown, keys: readonly string[], what: string, problems: string[]): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push(`${what} is not an object: ${show(value)}`);
    return false;
  }
  const actual = keysOf(value);
  const wanted = [...keys].sort();
  if (!isDeepStrictEqual(actual, wanted)) problems.push(`${what} has fields ${show(actual)}, expected exactly ${show(wanted)}`);
  return true;
}

/** Spec 2.1 shapes, field names and types exact. */
export function shapeProblems(shape: ShapeName, body: unknown, what: string = shape): string[] {
  const problems: string[] = [];
  switch (shape) {
    case 'Order': {
      if (!exactKeys(body, ['id', 'item', 'quantity', 'status', 'created_at'], what, problems)) break;
      if (typeof body['id'] !== 'string' || !UUID.test(body['id'])) problems.push(`${what}.id is not a UUID: ${show(body['id'])}`);
      if (typeof body['item'] !== 'string') problems.push(`${what}.item is not a string`);
      if (!Number.isInteger(body['quantity'])) problems.push(`${what}.quantity is not an integer: ${show(body['quantity'])}`);
      if (body['status'] !== 'pending') problems.push(`${what}.status is ${show(body['status'])}, the only status is "pending"`);
      if (typeof body['created_at'] !== 'string' || !RFC3339.test(body['created_at'])) problems.push(`${what}.created_at is not RFC 3339: ${show(body['created_at'])}`);
      break;
    }
    case 'LoginResponse':
      if (exactKeys(body, ['token'], what, problems) && (typeof body['token'] !== 'string' || body['token'] === '')) problems.push(`${what}.token is not a non-empty string`);
      break;
    case 'ListOrdersResponse': {
      if (!exactKeys(body, ['orders'], what, problems)) break;
      const orders = body['orders'];
      if (!Array.isArray(orders)) problems.push(`${what}.orders is not an array: ${show(orders)}`);
      else orders.forEach((order, i) => problems.push(...shapeProblems('Order', order, `${what}.orders[${i}]`)));
      break;
    }
    case 'RecentResponse': {
      if (!exactKeys(body, ['recent'], what, problems)) break;
      const recent = body['recent'];
      if (!Array.isArray(recent)) problems.push(`${what}.recent is not an array: ${show(recent)}`);
      else if (!recent.every((id) => typeof id === 'string' && UUID.test(id))) problems.push(`${what}.recent holds a non-UUID: ${show(recent)}`);
      break;
    }
    case 'Error':
      if (exactKeys(body, ['error'], what, problems) && typeof body['error'] !== 'string') problems.push(`${what}.error is not a string`);
      break;
    case 'HealthReport': {
      if (!exactKeys(body, ['clean', 'nodes'], what, problems)) break;
      if (typeof body['clean'] !== 'boolean') problems.push(`${what}.clean is not a boolean`);
      const nodes = body['nodes'];
      if (nodes !== null && !Array.isArray(nodes)) problems.push(`${what}.nodes is neither an array nor null`);
      if (Array.isArray(nodes)) {
        nodes.forEach((node: unknown, i) => {
          const keys = keysOf(node);
          const allowed = ['error', 'name', 'status'];
          if (!keys.includes('name') || !keys.includes('status') || keys.some((k) => !allowed.includes(k))) {
            problems.push(`${what}.nodes[${i}] has fields ${show(keys)}, expected name, status and optionally error`);
          }
        });
      }
      break;
    }
  }
  return problems;
}

function bodyProblems(expect: BodyExpect, body: unknown, resolve: Resolve): string[] {
  const problems: string[] = [];
  if (expect.shape !== undefined) problems.push(...shapeProblems(expect.shape, body));
  const record = (body ?? {}) as Record<string, unknown>;
  for (const [field, wanted] of Object.entries(resolve(expect.fields ?? {}))) {
    if (!isDeepStrictEqual(record[field], wanted)) problems.push(`body.${field} is ${show(record[field])}, expected ${show(wanted)}`);
  }
  if (expect.orders !== undefined || expect.ordersLength !== undefined) {
    const orders = Array.isArray(record['orders']) ? (record['orders'] as { id?: unknown }[]) : [];
    const ids = orders.map((o) => o.id);
    if (expect.orders !== undefined && !isDeepStrictEqual(ids, resolve(expect.orders))) {
      problems.push(`orders are ${show(ids)}, expected exactly ${show(resolve(expect.orders))}`);
    }
    if (expect.ordersLength !== undefined && ids.length !== expect.ordersLength) problems.push(`${ids.length} orders, expected ${expect.ordersLength}`);
  }
  if (expect.recent !== undefined && !isDeepStrictEqual(record['recent'], resolve(expect.recent))) {
    problems.push(`recent is ${show(record['recent'])}, expected exactly ${show(resolve(expect.recent))}`);
  }
  return problems;
}

function httpProblems(expect: HttpExpect, reply: Reply, resolve: Resolve): string[] {
  const problems: string[] = [];
  if (reply.status !== expect.status) problems.push(`status ${reply.status}, expected ${expect.status}`);
  const headers = reply.headers ?? {};
  const contentType = expect.contentType ?? (expect.error !== undefined || expect.body !== undefined ? 'application/json' : undefined);
  if (contentType !== undefined && !(headers['content-type'] ?? '').startsWith(contentType)) {
    problems.push(`content-type ${show(headers['content-type'])}, expected ${contentType}`);
  }
  if (expect.error !== undefined) {
    const wanted = resolve(expect.error);
    const shape = shapeProblems('Error', reply.body, 'Error body');
    if (shape.length > 0) problems.push(...shape);
    else if ((reply.body as { error: string }).error !== wanted) problems.push(`error ${show((reply.body as { error: string }).error)}, expected ${show(wanted)}`);
  }
  if (expect.body !== undefined) problems.push(...bodyProblems(expect.body, reply.body, resolve));
  for (const [name, wanted] of Object.entries(expect.headers ?? {})) {
    const actual = headers[name.toLowerCase()];
    const ok = typeof wanted === 'string' ? actual === resolve(wanted) : actual !== undefined && wanted.test(actual);
    if (!ok) problems.push(`header ${name} is ${show(actual)}, expected ${show(wanted)}`);
  }
  for (const part of expect.textIncludes ?? []) {
    if (!(reply.text ?? '').includes(resolve(part))) problems.push(`body does not contain ${show(resolve(part))}`);
  }
  return problems;
}

function grpcProblems(expect: GrpcExpect, reply: Reply, resolve: Resolve): string[] {
  const problems: string[] = [];
  if (reply.codeName !== expect.code) problems.push(`code ${reply.codeName}, expected ${expect.code}`);
  if (expect.message !== undefined && reply.message !== resolve(expect.message)) problems.push(`message ${show(reply.message)}, expected ${show(resolve(expect.message))}`);
  if (expect.body !== undefined) problems.push(...bodyProblems(expect.body, reply.body, resolve));
  return problems;
}

/** The expectation for one API; undefined means the case does not apply there. */
export function expectationFor(expectation: Expectation, api: Api, variant: RestVariant | undefined): HttpExpect | GrpcExpect | undefined {
  if (api === 'grpc') return expectation.grpc;
  return (variant === undefined ? undefined : expectation.variants?.[variant]?.http) ?? expectation.http;
}

export function checkReply(reply: Reply, expectation: Expectation, variant: RestVariant | undefined, resolve: Resolve, label: string): void {
  const expected = expectationFor(expectation, reply.api, variant);
  if (expected === undefined) throw new CaseFailure(`${label}: no ${reply.api} expectation for this step`);
  const problems = reply.api === 'grpc' ? grpcProblems(expected as GrpcExpect, reply, resolve) : httpProblems(expected as HttpExpect, reply, resolve);
  if (problems.length > 0) throw new CaseFailure(`${label}: ${problems.join('; ')} (got ${describeReply(reply)})`);
}
