import { gzipSync } from 'node:zlib';
import { flow, type Case, type RequestCase } from '../case-model.ts';
import { INTERNAL, MALFORMED, MSG, OK, restCase } from './messages.ts';
import { rawHttp1Responses } from './raw-http1.ts';

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

const BEARER = 'Bearer {token}';
const NOT_FOUND = { status: 404, error: MSG.notFound } as const;
const NOT_ALLOWED = { status: 405, error: MSG.methodNotAllowed } as const;
const TOO_LARGE = { status: 413, error: MSG.tooLarge } as const;
const post = (path: string, body: string) => ({ method: 'POST', path, headers: JSON_HEADERS, body });

const malformed: Case[] = UNDECODABLE.flatMap(([tag, body]): RequestCase[] => [
  restCase(`login-body-${tag}`, ['LOGIN-400-malformed', 'ERR-malformed-body', 'SHAPE-error'], post('/auth/login', body), MALFORMED.http!),
  restCase(`create-body-${tag}`, ['CREATE-400', 'ERR-malformed-body', 'SHAPE-error'], post('/orders', body), MALFORMED.http!, BEARER),
]);

const wrongTypes: Case[] = [
  restCase(
    'login-username-not-a-string',
    ['LOGIN-400-malformed', 'ERR-malformed-body', 'SHAPE-login-request'],
    post('/auth/login', '{"username": 5, "password": "x"}'),
    MALFORMED.http!,
  ),
];

/** A JSON body of exactly `size` bytes: a valid order padded with an ignored field. */
function paddedOrder(size: number): string {
  const head = '{"item":"widget","quantity":1,"pad":"';
  const tail = '"}';
  return head + 'p'.repeat(size - head.length - tail.length) + tail;
}

const limits: Case[] = [
  restCase('create-body-over-1mib', ['LIMIT-body-size'], post('/orders', paddedOrder(MIB + 1)), TOO_LARGE, BEARER),
  restCase(
    'create-body-exactly-1mib',
    ['LIMIT-body-size', 'CREATE-201'],
    post('/orders', paddedOrder(MIB)),
    { status: 201, body: { shape: 'Order' } },
    BEARER,
  ),
  restCase('login-body-over-1mib', ['LIMIT-body-size'], post('/auth/login', `{"username":"x","password":"${'p'.repeat(MIB)}"}`), TOO_LARGE),
];

/** Routes the service does not have, or methods a route does not take (spec 4.1, 5 rule 11, 6 rule 5). */
const routing: Case[] = [
  restCase('unknown-path', ['HTTP-404-unknown', 'SHAPE-error'], { method: 'GET', path: '/no-such-route' }, NOT_FOUND),
  restCase('unknown-nested-path', ['HTTP-404-unknown'], { method: 'GET', path: '/orders/{uuid}/items' }, NOT_FOUND, BEARER),
  ...(['PUT', 'PATCH', 'DELETE'] as const).map((method): RequestCase => ({
    ...restCase(
      `no-${method.toLowerCase()}-on-an-order`,
      ['ORDER-no-transitions', 'HTTP-405-method'],
      { method, path: '/orders/{order:a}', headers: JSON_HEADERS, body: '{"status":"shipped"}' },
      NOT_ALLOWED,
      BEARER,
    ),
    setup: { orders: [{ ref: 'a' }] },
  })),
  restCase('wrong-method-on-login', ['HTTP-405-method'], { method: 'GET', path: '/auth/login' }, NOT_ALLOWED),
  restCase('wrong-method-on-recent', ['HTTP-405-method'], post('/me/recent', '{}'), NOT_ALLOWED, BEARER),
  restCase('no-refresh-or-revocation-endpoint', ['AUTH-11-no-refresh', 'SVC-out-of-scope'], post('/auth/refresh', '{}'), NOT_FOUND, BEARER),
  restCase(
    'no-sign-up-endpoint',
    ['SVC-out-of-scope', 'AUTH-11-no-refresh'],
    post('/auth/register', '{"username":"x","password":"y"}'),
    NOT_FOUND,
  ),
  restCase('no-users-endpoint', ['SVC-out-of-scope'], post('/users', '{"username":"x","password":"y"}'), NOT_FOUND),
  restCase(
    'no-webhook-or-event-stream-routes',
    ['EVT-5-no-other'],
    { method: 'GET', path: '/events', headers: { accept: 'text/event-stream' } },
    { status: 404 },
    BEARER,
  ),
  restCase(
    'no-webhook-registration-route',
    ['EVT-5-no-other'],
    post('/webhooks', '{"url":"http://127.0.0.1:1/"}'),
    { status: 404 },
    BEARER,
  ),
  ...(['/livez', '/healthz', '/readyz', '/metrics'] as const).map((path) =>
    restCase(
      `public-listener-has-no-${path.slice(1)}`,
      ['ADMIN-404-on-public', 'SVC-two-listeners', 'ADMIN-cluster-only'],
      { method: 'GET', path },
      NOT_FOUND,
    ),
  ),
];

/** A structured log line is one JSON object (rule LOG-json). */
function isJsonObject(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}

const failures: Case[] = [
  flow('unexpected-failure-is-masked-500', ['ERR-internal', 'ERR-500-panic', 'GRPC-message-text'], { needs: ['faults'] }, async (t) => {
    const me = await t.user();
    await t.target.simulator!.set('database', { failNext: 1 });
    const reply = await t.driver.listOrders(me.auth, {});
    t.check(reply, INTERNAL, 'list with the store failing');
    t.assert(!/database|simulated/.test(reply.text ?? reply.message ?? ''), 'the 500 reveals the cause');
    t.check(await t.driver.listOrders(me.auth, {}), OK, 'the next request succeeds');
  }),
  // A backend outage is masked like a panic but logged as what it is, with the request's path (gRPC: its
  // full method name), so the operator can tell an outage from a bug.
  flow('backend-outage-is-logged-as-such', ['ERR-internal'], { needs: ['faults', 'logs'] }, async (t) => {
    const me = await t.user();
    const outage = (l: { readonly msg: unknown }) => l.msg === 'api: backend unavailable';
    const before = t.logs().filter(outage).length;
    await t.target.simulator!.set('database', { failNext: 1 });
    t.check(await t.driver.listOrders(me.auth, {}), INTERNAL, 'list with the store failing');
    const line = await t.waitFor(() => t.logs().filter(outage)[before], '`api: backend unavailable` for the failed list');
    const path = String(line['path']);
    t.assert(t.api === 'grpc' ? path.endsWith('/ListOrders') : path === '/orders', `the outage line's path is ${path}`);
    t.assert(line.level === 'error' && typeof line['err'] === 'string', `the outage line is ${JSON.stringify(line)}`);
  }),
  flow(
    'handler-panic-is-recovered-and-logged',
    ['CHAIN-R1-panic', 'ERR-500-panic'],
    { api: 'rest', needs: ['handlerFault', 'logs'] },
    async (t) => {
      const me = await t.user();
      await t.control().injectFault('findById');
      const id = crypto.randomUUID();
      t.check(await t.driver.getOrder(me.auth, id), { http: { status: 500, error: MSG.internal } }, 'get with the store failing');
      const path = `/orders/${id}`;
      const line = await t.waitFor(
        () => t.logs().find((l) => l.msg === 'api: panic recovered' && l['path'] === path),
        '`api: panic recovered` with the request path',
      );
      t.assert(typeof line['panic'] === 'string' && line['panic'] !== '', 'panic field is missing');
      t.assert(line.level === 'error', `panic logged at ${line.level}, expected error`);
      // Every observer saw the 500 recovery answered, the request line included.
      const logged = await t.waitFor(() => t.logs().find((l) => l.msg === 'request' && l['path'] === path), '`request` line of the panic');
      t.assert(logged['status'] === 500, `the panic's request line has status ${String(logged['status'])}, expected 500`);
    },
  ),
  flow(
    'panic-in-tracing-layer-is-recovered',
    ['CHAIN-R1-outermost', 'CHAIN-R1-panic'],
    { api: 'rest', needs: ['handlerFault', 'logs'], target: { isolated: true } },
    async (t) => {
      // The tracing layer's next startSpan throws (the control API black-box; the app's tracer in process).
      await t.control().injectFault('startSpan');
      t.check(
        await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' }),
        { http: { status: 500, error: MSG.internal } },
        'request whose tracing layer throws',
      );
      t.assert(!(await t.control().armedFaults()).includes('startSpan'), 'the REST side never started a span (tracing layer missing)');
      await t.waitFor(() => t.logs().find((l) => l.msg === 'api: panic recovered'), '`api: panic recovered` for the tracing-layer panic');
      t.check(await t.driver.raw!({ method: 'GET', path: '/openapi.yaml' }), { http: { status: 200 } }, 'the next request is served');
    },
  ),
  // In process the service's console is the test process's, so it is intercepted; a spawned executable's
  // stdout and stderr are its log (rawLines: every line it wrote, both streams), each line a JSON object.
  flow(
    'framework-logger-and-recovery-unused',
    ['CHAIN-R4-framework-logger', 'LOG-json'],
    { api: 'rest', needs: ['handlerFault', 'logs'], target: { isolated: true } },
    async (t) => {
      const me = await t.user();
      const written: string[] = [];
      const inProcess = t.target.hooks !== undefined;
      const originalError = console.error;
      const originalWarn = console.warn;
      const originalStderr = process.stderr.write.bind(process.stderr);
      if (inProcess) {
        console.error = (...args: unknown[]) => void written.push(args.map(String).join(' '));
        console.warn = (...args: unknown[]) => void written.push(args.map(String).join(' '));
        process.stderr.write = ((chunk: string | Uint8Array) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
      }
      try {
        await t.control().injectFault('listByUser');
        t.check(await t.driver.listOrders(me.auth, {}), { http: { status: 500, error: MSG.internal } }, 'a bug in a handler');
        // A failing store too, where the simulator can make one (not on real backends).
        const failures = t.target.simulator === undefined ? 1 : 2;
        if (failures === 2) {
          await t.target.simulator!.set('database', { failNext: 1 });
          t.check(await t.driver.listOrders(me.auth, {}), { http: { status: 500, error: MSG.internal } }, 'a failing store');
        }
        // The answers' request lines are logged last: once they are there, whatever else was written is too.
        await t.waitFor(
          () => t.logs().filter((l) => l.msg === 'request' && l['path'] === '/orders' && l['status'] === 500).length >= failures,
          'the request lines of the 500s',
        );
      } finally {
        console.error = originalError;
        console.warn = originalWarn;
        process.stderr.write = originalStderr;
      }
      t.assert(written.length === 0, `the framework wrote outside the structured logger: ${written.join(' | ').slice(0, 300)}`);
      const raw = t.target.logs!.raw;
      const notJson = raw.filter((line) => !isJsonObject(line));
      t.assert(notJson.length === 0, `lines outside the structured logger: ${notJson.join(' | ').slice(0, 300)}`);
      t.assert(!raw.join('\n').includes('    at '), 'a stack trace reached the logs (development mode?)');
    },
  ),
];

// ------------------------------------------------------------------------------ HTTP details (RFC 9110, 9112)

/** Rule HTTP-401-challenge: the challenge of a 401 (RFC 9110 section 11.6.1, RFC 6750 section 3). */
const CHALLENGE = 'Bearer realm="orders"';
const TOKEN_REFUSED = 'Bearer realm="orders", error="invalid_token"';
/** Rule HTTP-content-encoding's text (spec 7 leaves it to us). */
const ENCODING_REFUSED = 'Content-Encoding not supported';

const challenged = (error: string, challenge: string) => ({ status: 401, error, headers: { 'www-authenticate': challenge } }) as const;

const httpDetails: Case[] = [
  restCase(
    'missing-token-401-has-bearer-challenge',
    ['HTTP-401-challenge', 'ERR-401-missing'],
    { method: 'GET', path: '/orders' },
    challenged(MSG.missingAuth, CHALLENGE),
  ),
  restCase(
    'malformed-authorization-401-has-bearer-challenge',
    ['HTTP-401-challenge', 'AUTH-4-missing'],
    { method: 'GET', path: '/me/recent' },
    challenged(MSG.missingAuth, CHALLENGE),
    'Basic dXNlcjpwdw==',
  ),
  restCase(
    'invalid-token-401-names-invalid-token',
    ['HTTP-401-challenge', 'ERR-401-invalid'],
    { method: 'GET', path: '/orders/{uuid}' },
    challenged(MSG.invalidToken, TOKEN_REFUSED),
    'Bearer {tamperedToken}',
  ),
  {
    needs: ['secret'],
    ...restCase(
      'expired-token-401-names-invalid-token',
      ['HTTP-401-challenge', 'ERR-401-invalid'],
      { method: 'POST', path: '/orders', headers: JSON_HEADERS, body: '{"item":"widget","quantity":1}' },
      challenged(MSG.invalidToken, TOKEN_REFUSED),
      'Bearer {expiredToken}',
    ),
  },
  {
    ...restCase(
      'foreign-token-401-names-invalid-token',
      ['HTTP-401-challenge', 'ERR-401-invalid'],
      { method: 'GET', path: '/me/recent' },
      challenged(MSG.invalidToken, TOKEN_REFUSED),
      'Bearer {foreignToken}',
    ),
  },
  restCase(
    'invalid-credentials-401-has-bearer-challenge',
    ['HTTP-401-challenge', 'ERR-invalid-credentials'],
    post('/auth/login', '{"username":"{user}","password":"not-the-password"}'),
    challenged(MSG.invalidCredentials, CHALLENGE),
  ),
  // RFC 9110 section 8.4: no content coding is decoded, so a body that declares one is refused, not read as plain.
  ...(['gzip', 'br', 'deflate, gzip', 'x-unknown'] as const).map((coding) =>
    restCase(
      `create-with-content-encoding-${coding.replace(/\W+/g, '-')}-is-415`,
      ['HTTP-content-encoding'],
      { ...post('/orders', '{"item":"widget","quantity":1}'), headers: { ...JSON_HEADERS, 'content-encoding': coding } },
      { status: 415, error: ENCODING_REFUSED, headers: { 'accept-encoding': 'identity' } },
      BEARER,
    ),
  ),
  restCase(
    'login-with-a-real-gzip-body-is-415',
    ['HTTP-content-encoding'],
    {
      method: 'POST',
      path: '/auth/login',
      headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' },
      body: gzipSync('{"username":"alice","password":"secret"}'),
    },
    { status: 415, error: ENCODING_REFUSED, headers: { 'accept-encoding': 'identity' } },
  ),
  restCase(
    'create-with-identity-content-encoding-is-read',
    ['HTTP-content-encoding', 'CREATE-201'],
    { ...post('/orders', '{"item":"widget","quantity":1}'), headers: { ...JSON_HEADERS, 'content-encoding': 'identity' } },
    { status: 201, body: { shape: 'Order' } },
    BEARER,
  ),
  // Rule HTTP-parser-errors: garbage after a complete request is answered after that request, not in its place.
  flow(
    'complete-request-then-garbage-answers-both-in-order',
    ['HTTP-parser-errors'],
    { api: 'rest', drivers: ['rest-http1'] },
    async (t) => {
      const me = await t.user();
      const host = new URL(t.target.baseUrl).host;
      const replies = await rawHttp1Responses(
        t.target.baseUrl,
        `GET /me/recent HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${me.auth}\r\n\r\nXY`,
      );
      t.assert(
        replies.length === 2,
        `${replies.length} responses (${replies.map((r) => r.status).join(', ')}), expected the GET's and then a 400`,
      );
      t.check(replies[0]!, { http: { status: 200, body: { shape: 'RecentResponse' } } }, 'the complete GET');
      t.check(replies[1]!, { http: { status: 400, error: 'bad request', headers: { connection: 'close' } } }, 'the garbage after it');
    },
  ),
  flow(
    'two-complete-requests-then-garbage-answers-all-in-order',
    ['HTTP-parser-errors', 'HTTP1-pipeline-bound'],
    { api: 'rest', drivers: ['rest-http1'] },
    async (t) => {
      const me = await t.user();
      const host = new URL(t.target.baseUrl).host;
      const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${me.auth}\r\n\r\n`;
      const replies = await rawHttp1Responses(t.target.baseUrl, `${get('/orders')}${get('/me/recent')}\0\0`);
      t.assert(replies.length === 3, `${replies.length} responses (${replies.map((r) => r.status).join(', ')}), expected 200, 200, 400`);
      t.check(replies[0]!, { http: { status: 200, body: { shape: 'ListOrdersResponse' } } }, 'the first GET');
      t.check(replies[1]!, { http: { status: 200, body: { shape: 'RecentResponse' } } }, 'the second GET');
      t.check(replies[2]!, { http: { status: 400, error: 'bad request' } }, 'the garbage after them');
    },
  ),
  // An Expect the server cannot meet closes the connection (417, Connection: close): bytes after it are not answered.
  flow('unknown-expectation-then-stray-bytes-answers-417', ['HTTP-parser-errors'], { api: 'rest', drivers: ['rest-http1'] }, async (t) => {
    const me = await t.user();
    const host = new URL(t.target.baseUrl).host;
    const replies = await rawHttp1Responses(
      t.target.baseUrl,
      `GET /me/recent HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${me.auth}\r\nExpect: foo\r\n\r\nXY`,
    );
    t.assert(replies.length === 1, `${replies.length} responses (${replies.map((r) => r.status).join(', ')}), expected one 417`);
    t.check(replies[0]!, { http: { status: 417, error: 'expectation failed', headers: { connection: 'close' } } }, 'Expect: foo');
  }),
];

export const ERROR_CASES: Case[] = [...malformed, ...wrongTypes, ...limits, ...routing, ...failures, ...httpDetails];
