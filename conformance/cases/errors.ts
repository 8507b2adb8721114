import type { Case, RequestCase } from '../case-model.ts';
import { MALFORMED, MSG } from './messages.ts';

/** Spec 7 on the wire: undecodable bodies, unknown routes, oversized bodies, unexpected failures. */

const JSON_HEADERS = { 'content-type': 'application/json' };
const MIB = 1024 * 1024;

const UNDECODABLE: readonly (readonly [string, string])[] = [
  ['truncated-json', '{"item": "widget", '],
  ['empty-body', ''],
  ['json-null', 'null'],
  ['json-array', '[1, 2]'],
  ['json-string', '"widget"'],
  ['not-json', 'item=widget&quantity=1'],
];

const malformed: Case[] = UNDECODABLE.flatMap(([tag, body]): RequestCase[] => [
  {
    kind: 'request',
    name: `login-body-${tag}`,
    rules: ['LOGIN-400-malformed', 'ERR-malformed-body', 'SHAPE-error'],
    op: 'raw',
    input: { method: 'POST', path: '/auth/login', headers: JSON_HEADERS, body },
    expect: MALFORMED,
  },
  {
    kind: 'request',
    name: `create-body-${tag}`,
    rules: ['CREATE-400', 'ERR-malformed-body', 'SHAPE-error'],
    op: 'raw',
    auth: 'Bearer {token}',
    input: { method: 'POST', path: '/orders', headers: JSON_HEADERS, body },
    expect: MALFORMED,
  },
]);

const wrongTypes: Case[] = [
  {
    kind: 'request',
    name: 'login-username-not-a-string',
    rules: ['LOGIN-400-malformed', 'ERR-malformed-body', 'SHAPE-login-request'],
    op: 'raw',
    input: { method: 'POST', path: '/auth/login', headers: JSON_HEADERS, body: '{"username": 5, "password": "x"}' },
    expect: MALFORMED,
  },
];

/** A JSON body of exactly `size` bytes: a valid order padded with an ignored field. */
function paddedOrder(size: number): string {
  const head = '{"item":"widget","quantity":1,"pad":"';
  const tail = '"}';
  return head + 'p'.repeat(size - head.length - tail.length) + tail;
}

const limits: Case[] = [
  {
    kind: 'request',
    name: 'create-body-over-1mib',
    rules: ['LIMIT-body-size'],
    op: 'raw',
    auth: 'Bearer {token}',
    input: { method: 'POST', path: '/orders', headers: JSON_HEADERS, body: paddedOrder(MIB + 1) },
    expect: { http: { status: 413, error: MSG.tooLarge } },
  },
  {
    kind: 'request',
    name: 'create-body-exactly-1mib',
    rules: ['LIMIT-body-size', 'CREATE-201'],
    op: 'raw',
    auth: 'Bearer {token}',
    input: { method: 'POST', path: '/orders', headers: JSON_HEADERS, body: paddedOrder(MIB) },
    expect: { http: { status: 201, body: { shape: 'Order' } } },
  },
  {
    kind: 'request',
    name: 'login-body-over-1mib',
    rules: ['LIMIT-body-size'],
    op: 'raw',
    input: { method: 'POST', path: '/auth/login', headers: JSON_HEADERS, body: `{"username":"x","password":"${'p'.repeat(MIB)}"}` },
    expect: { http: { status: 413, error: MSG.tooLarge } },
  },
];

const routing: Case[] = [
  {
    kind: 'request',
    name: 'unknown-path',
    rules: ['HTTP-404-unknown', 'SHAPE-error'],
    op: 'raw',
    input: { method: 'GET', path: '/no-such-route' },
    expect: { http: { status: 404, error: MSG.notFound } },
  },
  {
    kind: 'request',
    name: 'unknown-nested-path',
    rules: ['HTTP-404-unknown'],
    op: 'raw',
    auth: 'Bearer {token}',
    input: { method: 'GET', path: '/orders/{uuid}/items' },
    expect: { http: { status: 404, error: MSG.notFound } },
  },
  ...(['PUT', 'PATCH', 'DELETE'] as const).map(
    (method): RequestCase => ({
      kind: 'request',
      name: `no-${method.toLowerCase()}-on-an-order`,
      rules: ['ORDER-no-transitions', 'HTTP-405-method'],
      setup: { orders: [{ ref: 'a' }] },
      op: 'raw',
      auth: 'Bearer {token}',
      input: { method, path: '/orders/{order:a}', headers: JSON_HEADERS, body: '{"status":"shipped"}' },
      expect: { http: { status: 405, error: MSG.methodNotAllowed } },
    }),
  ),
  {
    kind: 'request',
    name: 'wrong-method-on-login',
    rules: ['HTTP-405-method'],
    op: 'raw',
    input: { method: 'GET', path: '/auth/login' },
    expect: { http: { status: 405, error: MSG.methodNotAllowed } },
  },
  {
    kind: 'request',
    name: 'wrong-method-on-recent',
    rules: ['HTTP-405-method'],
    op: 'raw',
    auth: 'Bearer {token}',
    input: { method: 'POST', path: '/me/recent', headers: JSON_HEADERS, body: '{}' },
    expect: { http: { status: 405, error: MSG.methodNotAllowed } },
  },
];

/**
 * A programming error (not a backend outage) in the next call of one port method: the closest thing to
 * a Go panic in a handler. The method is restored after one call.
 */
function injectBug(target: Record<string, unknown>, method: string): void {
  const had = Object.prototype.hasOwnProperty.call(target, method);
  const original = target[method];
  target[method] = () => {
    if (had) target[method] = original;
    else delete target[method];
    throw new TypeError('injected bug: cannot read properties of undefined');
  };
}

const failures: Case[] = [
  {
    kind: 'flow',
    name: 'unexpected-failure-is-masked-500',
    rules: ['ERR-internal', 'ERR-500-panic', 'GRPC-message-text'],
    needs: ['faults'],
    async run(t) {
      const me = await t.user();
      await t.target.simulator!.set('database', { failNext: 1 });
      const reply = await t.driver.listOrders(me.auth, {});
      t.check(reply, { http: { status: 500, error: MSG.internal }, grpc: { code: 'INTERNAL', message: MSG.internal } }, 'list with the store failing');
      t.assert(!/database|simulated/.test(reply.text ?? reply.message ?? ''), 'the 500 reveals the cause');
      t.check(await t.driver.listOrders(me.auth, {}), { http: { status: 200 }, grpc: { code: 'OK' } }, 'the next request succeeds');
    },
  },
  {
    kind: 'flow',
    name: 'handler-panic-is-recovered-and-logged',
    rules: ['CHAIN-R1-panic', 'ERR-500-panic'],
    api: 'rest',
    needs: ['inProcess', 'logs'],
    async run(t) {
      const me = await t.user();
      injectBug(t.target.hooks!.backends.repository as unknown as Record<string, unknown>, 'findById');
      const id = crypto.randomUUID();
      t.check(await t.driver.getOrder(me.auth, id), { http: { status: 500, error: MSG.internal } }, 'get with the store failing');
      const path = `/orders/${id}`;
      const line = await t.waitFor(() => t.logs().find((l) => l.msg === 'api: panic recovered' && l['path'] === path), '`api: panic recovered` with the request path');
      t.assert(typeof line['panic'] === 'string' && line['panic'] !== '', 'panic field is missing');
      t.assert(line.level === 'error', `panic logged at ${line.level}, expected error`);
    },
  },
  {
    kind: 'flow',
    name: 'panic-in-tracing-layer-is-recovered',
    rules: ['CHAIN-R1-outermost', 'CHAIN-R1-panic'],
    api: 'rest',
    needs: ['inProcess', 'logs'],
    target: { isolated: true },
    async run(t) {
      const tracer = t.target.hooks!.app.core.observability.tracer;
      const original = tracer.startSpan.bind(tracer);
      let thrown = false;
      tracer.startSpan = (...args: Parameters<typeof tracer.startSpan>) => {
        if (!thrown) {
          thrown = true;
          throw new Error('tracing layer exploded');
        }
        return original(...args);
      };
      try {
        t.check(await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' }), { http: { status: 500, error: MSG.internal } }, 'request whose tracing layer throws');
        t.assert(thrown, 'the REST side never started a span (tracing layer missing)');
        await t.waitFor(() => t.logs().find((l) => l.msg === 'api: panic recovered'), '`api: panic recovered` for the tracing-layer panic');
        t.check(await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' }), { http: { status: 200 } }, 'the next request is served');
      } finally {
        tracer.startSpan = original;
      }
    },
  },
  {
    kind: 'flow',
    name: 'framework-logger-and-recovery-unused',
    rules: ['CHAIN-R4-framework-logger', 'LOG-json'],
    api: 'rest',
    needs: ['inProcess', 'logs'],
    target: { isolated: true },
    async run(t) {
      const me = await t.user();
      const written: string[] = [];
      const originalError = console.error;
      const originalWarn = console.warn;
      const originalStderr = process.stderr.write.bind(process.stderr);
      console.error = (...args: unknown[]) => void written.push(args.map(String).join(' '));
      console.warn = (...args: unknown[]) => void written.push(args.map(String).join(' '));
      process.stderr.write = ((chunk: string | Uint8Array) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
      try {
        injectBug(t.target.hooks!.backends.repository as unknown as Record<string, unknown>, 'listByUser');
        t.check(await t.driver.listOrders(me.auth, {}), { http: { status: 500, error: MSG.internal } }, 'a bug in a handler');
        t.target.hooks!.fakes?.store.trouble.failNext(1, 'framework probe');
        await t.driver.listOrders(me.auth, {});
        await t.sleep(20);
      } finally {
        console.error = originalError;
        console.warn = originalWarn;
        process.stderr.write = originalStderr;
      }
      t.assert(written.length === 0, `the framework wrote outside the structured logger: ${written.join(' | ').slice(0, 300)}`);
      t.assert(!(t.target.logs!.raw.join('\n').includes('    at ')), 'a stack trace reached the logs (development mode?)');
    },
  },
];

export const ERROR_CASES: Case[] = [...malformed, ...wrongTypes, ...limits, ...routing, ...failures];
