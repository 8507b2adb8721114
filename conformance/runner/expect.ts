import { isDeepStrictEqual } from 'node:util';
import type { BodyExpect, Expectation, GrpcExpect, HttpExpect, ShapeName } from '../case-model.ts';
import type { Reply } from '../drivers/driver.ts';
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
  const text =
    typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value, (_k, v: unknown) => (v instanceof RegExp ? String(v) : v));
  return text === undefined ? String(value) : text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

function describeReply(reply: Reply): string {
  if (reply.api === 'grpc')
    return `gRPC ${reply.codeName ?? reply.code} ${show(reply.message)}${reply.body === undefined ? '' : ` ${show(reply.body)}`}`;
  return `HTTP ${reply.status} ${show(reply.text ?? '')}`;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isUuid = (value: unknown): boolean => typeof value === 'string' && UUID.test(value);
const isNode = (node: unknown): boolean =>
  isObject(node) && 'name' in node && 'status' in node && Object.keys(node).every((k) => ['name', 'status', 'error'].includes(k));

/** Spec 2.1 shapes: the exact field set, and per field a check and what the value must be. */
const SHAPES: Readonly<Record<ShapeName, Readonly<Record<string, readonly [(value: unknown) => boolean, string]>>>> = {
  Order: {
    id: [isUuid, 'a UUID'],
    item: [(v) => typeof v === 'string', 'a string'],
    quantity: [Number.isInteger, 'an integer'],
    status: [(v) => v === 'pending', '"pending", the only status'],
    created_at: [(v) => typeof v === 'string' && RFC3339.test(v), 'RFC 3339'],
  },
  LoginResponse: { token: [(v) => typeof v === 'string' && v !== '', 'a non-empty string'] },
  ListOrdersResponse: {
    orders: [(v) => Array.isArray(v) && v.every((order) => shapeProblems('Order', order).length === 0), 'an array of Orders'],
  },
  RecentResponse: { recent: [(v) => Array.isArray(v) && v.every(isUuid), 'an array of UUIDs'] },
  Error: { error: [(v) => typeof v === 'string', 'a string'] },
  HealthReport: {
    clean: [(v) => typeof v === 'boolean', 'a boolean'],
    nodes: [(v) => v === null || (Array.isArray(v) && v.every(isNode)), 'null or an array of nodes with name, status and optionally error'],
  },
};

/** Spec 2.1 shapes, field names and types exact. */
export function shapeProblems(shape: ShapeName, body: unknown, what: string = shape): string[] {
  if (!isObject(body)) return [`${what} is not an object: ${show(body)}`];
  const fields = SHAPES[shape];
  const [actual, wanted] = [Object.keys(body).sort(), Object.keys(fields).sort()];
  const problems = isDeepStrictEqual(actual, wanted) ? [] : [`${what} has fields ${show(actual)}, expected exactly ${show(wanted)}`];
  for (const [field, [valid, must]] of Object.entries(fields)) {
    if (field in body && !valid(body[field])) problems.push(`${what}.${field} is not ${must}: ${show(body[field])}`);
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
    if (expect.ordersLength !== undefined && ids.length !== expect.ordersLength)
      problems.push(`${ids.length} orders, expected ${expect.ordersLength}`);
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
    else if ((reply.body as { error: string }).error !== wanted)
      problems.push(`error ${show((reply.body as { error: string }).error)}, expected ${show(wanted)}`);
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
  if (expect.message !== undefined && reply.message !== resolve(expect.message))
    problems.push(`message ${show(reply.message)}, expected ${show(resolve(expect.message))}`);
  if (expect.body !== undefined) problems.push(...bodyProblems(expect.body, reply.body, resolve));
  return problems;
}

/** Checks a reply against the expectation for its API (and REST variant); none means the step does not apply there. */
export function checkReply(
  reply: Reply,
  expectation: Expectation,
  variant: RestVariant | undefined,
  resolve: Resolve,
  label: string,
): void {
  const expected =
    reply.api === 'grpc'
      ? expectation.grpc
      : ((variant === undefined ? undefined : expectation.variants?.[variant]?.http) ?? expectation.http);
  if (expected === undefined) throw new CaseFailure(`${label}: no ${reply.api} expectation for this step`);
  const problems =
    reply.api === 'grpc' ? grpcProblems(expected as GrpcExpect, reply, resolve) : httpProblems(expected as HttpExpect, reply, resolve);
  if (problems.length > 0) throw new CaseFailure(`${label}: ${problems.join('; ')} (got ${describeReply(reply)})`);
}
