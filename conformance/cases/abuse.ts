import { flow, type Case, type FlowContext } from '../case-model.ts';
import type { Reply } from '../drivers/driver.ts';
import { decodeClaims, mintToken } from '../runner/tokens.ts';
import { MSG, OK, restCase, unauthenticated } from './messages.ts';
import { parseScrape } from './observability.ts';
import { keepSendingAfterAnswer, pastRateLimit, rawHttp1, rawHttp1PastRateLimit } from './raw-http1.ts';
import { connect as netConnect } from 'node:net';
import { SNIFF_TIMEOUT_MS } from '../../packages/one-port-grpc/index.ts';
import { HTTP1_SERVER_TIMEOUTS, type ServerTimeouts } from '../../src/transports/http/server/timeouts.ts';

/**
 * Abuse on every REST side and the login on every transport: the login gate, HTTP/1.1
 * timeouts as declared, parser errors with Error bodies, singleton headers, canonical tokens, HEAD,
 * JSON content types.
 */

/** Our texts for the new answers (spec 7 leaves them to us; spec/rules.yaml records them). */
const TEXT = {
  loginBusy: 'too many login attempts',
  unsupportedMediaType: 'Content-Type must be application/json',
  badHost: 'missing or duplicate Host header',
  badRequest: 'bad request',
  headersTooLarge: 'request header fields too large',
  expectationFailed: 'expectation failed',
  requestTimeout: 'request timeout',
} as const;

const HTTP1_ONLY = ['rest-http1'] as const;

function host(baseUrl: string): string {
  return new URL(baseUrl).host;
}

/** An Error body with exactly this text and a JSON content type (what t.check's `error` asserts). */
function errorAnswer(status: number, error: string) {
  return { http: { status, error, contentType: 'application/json' } } as const;
}

// ------------------------------------------------------------------------------ the login gate

/**
 * Unknown users: each costs a full-cost scrypt against the dummy hash, as an attacker's guesses do
 * (a test user's own hash may be cheaper).
 */
function wrongLogin(i: number) {
  return { username: `flood-${i}-${crypto.randomUUID()}`, password: 'wrong-password' };
}

const loginGateCases: Case[] = [
  // Its own target: the flood must not refuse other cases' logins.
  flow(
    'login-flood-refused-fast-victim-served',
    ['LOGIN-gate', 'LOGIN-gate-fair'],
    { api: 'any', needs: ['users'], target: { isolated: true } },
    async (t) => {
      // Far more than the gate lets one client run or queue (1 + 2): REST within the default rate limit
      // (50/s burst), gRPC (no rate limit) the same size.
      const floodSize = 40;
      const victim = await t.user('victim');
      const flood = Array.from({ length: floodSize }, (_, i) => t.driver.login(wrongLogin(i)));
      // The victim is another client: another source address, so another queue of the gate.
      await t.sleep(20);
      const victimLogin = await t.via('rest-http1').raw!({
        method: 'POST',
        path: '/auth/login',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: victim.username, password: victim.password }),
        localAddress: '127.0.0.2',
      });
      const replies = await Promise.all(flood);
      t.check(victimLogin, { http: { status: 200, body: { shape: 'LoginResponse' } } }, "victim's login while the flood runs");
      const refused = replies.filter((r) =>
        t.api === 'grpc'
          ? r.codeName === 'RESOURCE_EXHAUSTED'
          : r.status === 429 && (r.body as { error?: string } | undefined)?.error === TEXT.loginBusy,
      );
      t.assert(
        refused.length > 0,
        `none of ${floodSize} parallel logins from one client was refused by the login gate: ${JSON.stringify(replies.slice(0, 3).map((r) => r.status ?? r.codeName))}`,
      );
      t.check(
        refused[0]!,
        { http: { status: 429, error: TEXT.loginBusy }, grpc: { code: 'RESOURCE_EXHAUSTED', message: TEXT.loginBusy } },
        'a refused flood login',
      );
      // A slot frees within a derivation or two: the client is told to come back in a second.
      if (t.api === 'rest')
        t.assert(
          refused[0]!.headers?.['retry-after'] === '1',
          `a refused flood login: Retry-After ${String(refused[0]!.headers?.['retry-after'])}, expected 1`,
        );
      const others = replies.filter((r) => !refused.includes(r));
      for (const r of others) t.check(r, unauthenticated(MSG.invalidCredentials), 'an admitted flood login');
    },
  ),
];

// ------------------------------------------------------------------------------ HTTP/1.1 timeouts

/**
 * The timeouts the fake columns run with (set in composition, src/transports/http/server/timeouts.ts):
 * Node enforces them exactly as it enforces the declared 10 s and 30 s, in well under a second each.
 */
const SHORT_HTTP1_TIMEOUTS = { headersMs: 300, requestMs: 900 } as const;
/**
 * How often node:http sweeps its connections for these timeouts when nobody says (connectionsCheckingInterval):
 * without the listener's own interval (TIMEOUT_CHECK_INTERVAL_MS) a timeout fires up to this much late.
 */
const NODE_DEFAULT_SWEEP_MS = 30_000;
/** How late a production timeout may fire on a busy machine (the real-backend suite, which waits them out). */
const LATENESS_ALLOWED_MS = 3_000;

/**
 * Enforced, not declared (rule LIMIT-timeouts-enforced): slowloris headers, a slow body and an endless
 * chunked body, all at once, against the timeouts the listener declares (its transport's `timeouts`).
 * Each is answered 408, no earlier than declared (a machine's slowness only makes it later) and before
 * Node's own sweep would have come (the order of the listener's sweep and Node's default, NODE_DEFAULT_SWEEP_MS).
 * `lateness` (the real-backend suite, production values waited out): also measured, each 408 at most that
 * much after its timeout, the headers timeout first.
 */
async function timeoutsEnforced(t: FlowContext, lateness?: number): Promise<ServerTimeouts> {
  const declared = t.target.hooks!.app.transport.timeouts;
  const base = t.target.baseUrl;
  // A byte well within each timeout: the connection is never idle, only slow.
  const dripEveryMs = Math.min(1_000, Math.floor(declared.headersMs / 4));
  const timeoutMs = declared.requestMs + NODE_DEFAULT_SWEEP_MS;
  const [slowHeaders, slowBody, endlessChunks] = await Promise.all([
    rawHttp1(base, `GET /orders HTTP/1.1\r\nHost: ${host(base)}\r\n`, { drip: () => 'X-Slow: a\r\n', dripEveryMs, timeoutMs }),
    rawHttp1(base, `POST /auth/login HTTP/1.1\r\nHost: ${host(base)}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`, {
      drip: () => ' ',
      dripEveryMs,
      timeoutMs,
    }),
    rawHttp1(
      base,
      `POST /auth/login HTTP/1.1\r\nHost: ${host(base)}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      { drip: () => '1\r\n \r\n', dripEveryMs, timeoutMs },
    ),
  ]);
  for (const [label, answer, declaredMs] of [
    ['slow headers', slowHeaders, declared.headersMs],
    ['slow body', slowBody, declared.requestMs],
    ['endless chunked body', endlessChunks, declared.requestMs],
  ] as const) {
    const [min, max] = [declaredMs - 50, declaredMs + (lateness ?? NODE_DEFAULT_SWEEP_MS)];
    t.check(answer.reply, errorAnswer(408, TEXT.requestTimeout), label);
    t.assert(
      answer.elapsedMs >= min && answer.elapsedMs < max,
      `${label}: 408 after ${(answer.elapsedMs / 1000).toFixed(2)} s, expected from ${min / 1000} s and before ${max / 1000} s`,
    );
  }
  if (lateness !== undefined)
    t.assert(
      slowHeaders.elapsedMs < slowBody.elapsedMs && slowHeaders.elapsedMs < endlessChunks.elapsedMs,
      'the headers timeout fired after the request timeout',
    );
  return declared;
}

/** Connects, sends `payload` (if any) and reports whether and when (after the last byte arrived) the server closed the connection. */
function closedAfter(url: URL, payload: string | undefined, boundMs: number): Promise<{ closed: boolean; afterMs: number }> {
  return new Promise((resolve) => {
    const socket = netConnect(Number(url.port), url.hostname);
    let last = performance.now();
    socket.on('data', () => (last = performance.now()));
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      last = performance.now();
      if (payload !== undefined) socket.write(payload);
    });
    const bound = setTimeout(() => {
      socket.destroy();
      resolve({ closed: false, afterMs: performance.now() - last });
    }, boundMs);
    socket.once('close', () => {
      clearTimeout(bound);
      resolve({ closed: true, afterMs: performance.now() - last });
    });
  });
}

const timeoutCases: Case[] = [
  flow(
    'http1-timeouts-enforced-as-declared',
    ['LIMIT-timeouts-enforced', 'HTTP-parser-errors'],
    { api: 'rest', drivers: [...HTTP1_ONLY], backends: ['fake'], needs: ['inProcess'], target: { platformTimeouts: SHORT_HTTP1_TIMEOUTS } },
    async (t) => {
      const declared = await timeoutsEnforced(t);
      t.assert(
        declared.headersMs === SHORT_HTTP1_TIMEOUTS.headersMs && declared.requestMs === SHORT_HTTP1_TIMEOUTS.requestMs,
        `the listener declares ${JSON.stringify(declared)}, not the timeouts set in composition`,
      );
    },
  ),
  // The production values, waited out for real: the real-backend suite's columns (npm run test:real).
  flow(
    'http1-timeouts-enforced-at-production-values',
    ['LIMIT-timeouts-enforced', 'LIMIT-timeouts'],
    { api: 'rest', drivers: [...HTTP1_ONLY], backends: ['real'], needs: ['inProcess'], timeoutMs: 60_000 },
    async (t) => {
      // Meanwhile: an idle keep-alive connection, and on the one-port listener a silent one, are closed at their production values.
      const url = new URL(t.target.baseUrl);
      const idle = closedAfter(url, `GET /openapi.yaml HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`, HTTP1_SERVER_TIMEOUTS.idleMs + 10_000);
      const silent = t.transport.name === 'grpc' ? closedAfter(url, undefined, SNIFF_TIMEOUT_MS + 10_000) : undefined;
      const declared = await timeoutsEnforced(t, LATENESS_ALLOWED_MS);
      for (const [label, probe, declaredMs] of [
        ['idle keep-alive connection', await idle, HTTP1_SERVER_TIMEOUTS.idleMs],
        ['silent connection (one-port sniff)', await silent, SNIFF_TIMEOUT_MS],
      ] as const) {
        if (probe === undefined) continue;
        t.assert(
          probe.closed && probe.afterMs >= declaredMs - 50 && probe.afterMs <= declaredMs + LATENESS_ALLOWED_MS,
          `${label}: ${probe.closed ? `closed after ${(probe.afterMs / 1000).toFixed(2)} s` : 'still open'}, expected ${declaredMs / 1000} s`,
        );
      }
      t.assert(
        declared.headersMs === HTTP1_SERVER_TIMEOUTS.headersMs && declared.requestMs === HTTP1_SERVER_TIMEOUTS.requestMs,
        `the listener declares ${JSON.stringify(declared)}, not the production ${JSON.stringify(HTTP1_SERVER_TIMEOUTS)}`,
      );
    },
  ),
];

// ------------------------------------------------------------------------------ parser errors, CONNECT, Expect

const PARSER_ERRORS: readonly {
  readonly tag: string;
  readonly request: (host: string) => string | Buffer;
  readonly status: number;
  readonly error: string;
}[] = [
  {
    tag: 'bad-framing',
    request: (h) => `POST /auth/login HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    error: TEXT.badRequest,
  },
  {
    tag: 'bad-header-name',
    request: (h) => `GET /orders HTTP/1.1\r\nHost: ${h}\r\nBad Header: x\r\n\r\n`,
    status: 400,
    error: TEXT.badRequest,
  },
  {
    tag: 'raw-non-ascii-path',
    request: (h) => Buffer.concat([Buffer.from('GET /orders/'), Buffer.from([0xc3, 0xa9]), Buffer.from(` HTTP/1.1\r\nHost: ${h}\r\n\r\n`)]),
    status: 400,
    error: TEXT.badRequest,
  },
  {
    tag: 'header-block-over-16k',
    request: (h) => `GET /orders HTTP/1.1\r\nHost: ${h}\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
    status: 431,
    error: TEXT.headersTooLarge,
  },
  {
    tag: 'unknown-expectation',
    request: (h) =>
      `POST /auth/login HTTP/1.1\r\nHost: ${h}\r\nExpect: teapot\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    status: 417,
    error: TEXT.expectationFailed,
  },
  { tag: 'connect', request: (h) => `CONNECT example.com:443 HTTP/1.1\r\nHost: ${h}\r\n\r\n`, status: 405, error: MSG.methodNotAllowed },
];

const parserCases: Case[] = PARSER_ERRORS.map((p): Case =>
  flow(`parser-error-${p.tag}-has-error-body`, ['HTTP-parser-errors'], { api: 'rest', drivers: [...HTTP1_ONLY] }, async (t) => {
    const { reply } = await rawHttp1PastRateLimit(t.target.baseUrl, p.request(host(t.target.baseUrl)));
    t.check(reply, errorAnswer(p.status, p.error), p.tag);
    t.assert(
      JSON.stringify(Object.keys(reply.body as object)) === '["error"]',
      `${p.tag}: body is ${reply.text}, expected exactly {"error": "..."}`,
    );
  }),
);

// ------------------------------------------------------------------------------ singleton headers

/**
 * Two Authorization fields, written by hand over HTTP/1.1. HTTP/1.1 only: node's HTTP/2 client refuses
 * to send the field twice, so the h2c column has no client to send it with (the server-side check,
 * http/rest/request.ts, reads rawHeaders on both protocols).
 */
async function twoAuthorizations(t: FlowContext, first: string, second: string): Promise<Reply> {
  const base = t.target.baseUrl;
  return (
    await rawHttp1PastRateLimit(
      base,
      `GET /orders HTTP/1.1\r\nHost: ${host(base)}\r\nAuthorization: ${first}\r\nAuthorization: ${second}\r\n\r\n`,
    )
  ).reply;
}

const headerCases: Case[] = [
  flow('two-authorization-headers-are-refused', ['AUTH-single-header'], { api: 'rest', drivers: [...HTTP1_ONLY] }, async (t) => {
    const me = await t.user();
    t.check(await twoAuthorizations(t, me.auth, 'Bearer not-a-token'), unauthenticated(MSG.missingAuth), '[valid, invalid]');
    t.check(await twoAuthorizations(t, 'Bearer not-a-token', me.auth), unauthenticated(MSG.missingAuth), '[invalid, valid]');
    t.check(await twoAuthorizations(t, me.auth, me.auth), unauthenticated(MSG.missingAuth), '[valid, valid]');
    t.check(await t.driver.listOrders(me.auth, {}), { http: { status: 200 } }, 'one valid header');
  }),
  flow('host-header-missing-or-repeated-is-400', ['HTTP-host-header'], { api: 'rest', drivers: [...HTTP1_ONLY] }, async (t) => {
    const base = t.target.baseUrl;
    const served = { http: { status: 200, textIncludes: ['openapi:'] } } as const;
    // HTTP/1.0 has no Host requirement; one Host is the ordinary case.
    for (const [label, head, expected] of [
      [
        'two Host headers',
        `GET /openapi.yaml HTTP/1.1\r\nHost: ${host(base)}\r\nHost: evil.example\r\n\r\n`,
        errorAnswer(400, TEXT.badHost),
      ],
      ['HTTP/1.1 without Host', `GET /openapi.yaml HTTP/1.1\r\n\r\n`, errorAnswer(400, TEXT.badHost)],
      ['HTTP/1.0 without Host', `GET /openapi.yaml HTTP/1.0\r\n\r\n`, served],
      ['one Host header', `GET /openapi.yaml HTTP/1.1\r\nHost: ${host(base)}\r\nConnection: close\r\n\r\n`, served],
      // RFC 9112 §3.2.2: a server accepts the absolute-form (what a client sends to a proxy) as well.
      [
        'absolute-form target',
        `GET http://${host(base)}/openapi.yaml HTTP/1.1\r\nHost: ${host(base)}\r\nConnection: close\r\n\r\n`,
        served,
      ],
    ] as const) {
      t.check((await rawHttp1PastRateLimit(base, head)).reply, expected, label);
    }
  }),
];

// ------------------------------------------------------------------------------ canonical tokens

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The same bytes in another text: the unused low bits of the last character set. */
function lowBitsChanged(segment: string): string {
  const unused = segment.length % 4 === 2 ? 0b1111 : 0b11;
  return segment.slice(0, -1) + ALPHABET[ALPHABET.indexOf(segment.at(-1)!) | unused];
}

const tokenCases: Case[] = [
  flow('token-text-must-be-canonical', ['AUTH-token-canonical', 'AUTH-5-invalid'], { api: 'any' }, async (t) => {
    const me = await t.user();
    const [header, payload, signature] = me.token.split('.') as [string, string, string];
    t.check(await t.driver.listOrders(me.auth, {}), OK, 'the token as issued');
    const variants: [string, string][] = [
      ['= appended', `${me.token}=`],
      ['low bits of the signature changed', `${header}.${payload}.${lowBitsChanged(signature)}`],
      ['padding inside', `${header}.${payload}=.${signature}`],
    ];
    if (payload.length % 4 !== 0) variants.push(['low bits of the payload changed', `${header}.${lowBitsChanged(payload)}.${signature}`]);
    for (const [label, variant] of variants) {
      t.assert(variant !== me.token, `${label}: the variant is the token itself`);
      t.check(await t.driver.listOrders(`Bearer ${variant}`, {}), unauthenticated(MSG.invalidToken), label);
    }
  }),
  flow(
    'token-not-issued-as-this-service-issues',
    ['AUTH-token-issued-shape', 'AUTH-5-invalid', 'LIMIT-token-lifetime'],
    { api: 'any', needs: ['secret'] },
    async (t) => {
      const me = await t.user();
      const claims = decodeClaims(me.token);
      const sign = (iatOffset: number, expOffset: number) =>
        mintToken({ secret: t.target.jwtSecret!, sub: String(claims['sub']), name: String(claims['name']), iatOffset, expOffset });
      const lifetime = Number(claims['exp']) - Number(claims['iat']);
      const future = await sign(600, 600 + lifetime);
      t.check(await t.driver.listOrders(`Bearer ${future}`, {}), unauthenticated(MSG.invalidToken), 'iat 10 minutes in the future');
      const tooLong = await sign(0, lifetime + 60);
      t.check(await t.driver.listOrders(`Bearer ${tooLong}`, {}), unauthenticated(MSG.invalidToken), 'lifetime longer than JWT_EXPIRY');
      const likeOurs = await sign(0, lifetime);
      t.check(await t.driver.listOrders(`Bearer ${likeOurs}`, {}), OK, 'a token shaped as ours are');
    },
  ),
];

// ------------------------------------------------------------------------------ HEAD

const headCases: Case[] = [
  flow('head-answers-like-get-without-body', ['HTTP-head', 'METRICS-route-label'], { api: 'rest', needs: ['admin'] }, async (t) => {
    const { me, id } = await t.userWithOrder();
    const headers = { authorization: me.auth };
    for (const path of [`/orders/${id}`, '/orders', '/me/recent', '/openapi.yaml']) {
      const get = await t.driver.raw!({ method: 'GET', path, headers });
      const head = await t.driver.raw!({ method: 'HEAD', path, headers });
      t.check(head, { http: { status: 200 } }, `HEAD ${path}`);
      t.assert(head.text === '', `HEAD ${path} carried a body: ${head.text?.slice(0, 80)}`);
      t.assert(
        head.headers?.['content-type'] === get.headers?.['content-type'],
        `HEAD ${path}: content-type ${head.headers?.['content-type']}, GET's is ${get.headers?.['content-type']}`,
      );
    }
    const missing = await t.driver.raw!({ method: 'HEAD', path: `/orders/${crypto.randomUUID()}`, headers });
    t.check(missing, { http: { status: 404 } }, 'HEAD on a missing order');
    t.assert(missing.text === '', 'the 404 of a HEAD carried a body');
    const anonymous = await t.driver.raw!({ method: 'HEAD', path: '/orders' });
    t.check(anonymous, { http: { status: 401 } }, 'HEAD without a token');
    const login = await t.driver.raw!({ method: 'HEAD', path: '/auth/login' });
    t.check(login, { http: { status: 405, headers: { allow: 'POST' } } }, 'HEAD on the POST-only login');
    const wrong = await t.driver.raw!({ method: 'DELETE', path: '/orders', headers });
    t.check(wrong, { http: { status: 405, headers: { allow: 'POST, GET, HEAD' } } }, 'Allow names HEAD with GET');
    // The route label is the request's own method and the route's pattern.
    const samples = parseScrape(await t.scrape()).filter(
      (s) =>
        s.name === 'orders_http_requests_total' &&
        s.labels['method'] === 'HEAD' &&
        s.labels['route'] === 'HEAD /orders/{id}' &&
        s.labels['status'] === '200',
    );
    t.assert(
      samples.length === 1 && samples[0]!.value >= 1,
      'no orders_http_requests_total{method="HEAD",route="HEAD /orders/{id}",status="200"} sample',
    );
  }),
];

// ------------------------------------------------------------------------------ JSON request bodies

const NOT_JSON: readonly [string, string, string | undefined][] = [
  ['text-plain', 'text/plain;charset=UTF-8', undefined],
  ['form', 'application/x-www-form-urlencoded', undefined],
  ['xml', 'application/xml', '<login><username>{user}</username></login>'],
  ['json-in-latin1', 'application/json; charset=iso-8859-1', undefined],
  // A +json suffix counts under application/ only.
  ['json-suffix-under-text', 'text/vnd.orders+json', undefined],
];

const LOGIN_BODY = '{"username":"{user}","password":"{password}"}';
const login = (headers: Record<string, string>, body = LOGIN_BODY) => ({ method: 'POST', path: '/auth/login', headers, body });

const contentTypeCases: Case[] = [
  ...NOT_JSON.map(([tag, type, body]) =>
    restCase(
      `login-body-${tag}-is-415`,
      ['HTTP-json-content-type'],
      login({ 'content-type': type }, body),
      errorAnswer(415, TEXT.unsupportedMediaType).http,
    ),
  ),
  restCase(
    'create-body-text-plain-is-415',
    ['HTTP-json-content-type'],
    { method: 'POST', path: '/orders', headers: { 'content-type': 'text/plain' }, body: '{"item":"widget","quantity":1}' },
    errorAnswer(415, TEXT.unsupportedMediaType).http,
    'Bearer {token}',
  ),
  // The refused body is left unread, so an HTTP/1.1 connection cannot carry another request: the answer
  // says Connection: close (HTTP/2 forbids the header; its stream alone ends). An error answered after
  // reading its request keeps the connection, and only a refusal that asks the client to come back later
  // names a Retry-After.
  flow(
    'unread-body-answer-closes-the-http1-connection',
    ['HTTP-json-content-type', 'LIMIT-body-size'],
    { api: 'rest', connection: true },
    async (t) => {
      const me = await t.user();
      const json = { 'content-type': 'application/json', authorization: me.auth };
      const unread: [string, Reply][] = [
        ['415', await t.driver.raw!({ method: 'POST', path: '/orders', headers: { ...json, 'content-type': 'text/plain' }, body: '{}' })],
        ['413', await t.driver.raw!({ method: 'POST', path: '/orders', headers: json, body: `{"item":"${'p'.repeat(1024 * 1024)}"}` })],
      ];
      const read: [string, Reply][] = [
        ['400 malformed body', await t.driver.raw!({ method: 'POST', path: '/orders', headers: json, body: '{"item":' })],
        ['400 invalid id', await t.driver.raw!({ method: 'GET', path: '/orders/not-a-uuid', headers: json })],
      ];
      t.check(unread[0]![1], errorAnswer(415, TEXT.unsupportedMediaType), '415');
      t.check(unread[1]![1], errorAnswer(413, 'request body too large'), '413');
      for (const [label, reply] of [...unread, ...read]) {
        const connection = reply.headers?.['connection'];
        const closes = reply.httpVersion === '1.1' && unread.some(([, r]) => r === reply);
        if (closes) t.assert(connection === 'close', `${label} over HTTP/1.1: Connection ${String(connection)}, expected close`);
        else if (reply.httpVersion === '1.1')
          t.assert(connection === 'keep-alive', `${label}: Connection ${String(connection)}, expected keep-alive`);
        else t.assert(connection === undefined, `${label} over HTTP/${String(reply.httpVersion)}: Connection ${String(connection)}`);
        t.assert(reply.headers?.['retry-after'] === undefined, `${label}: Retry-After ${String(reply.headers?.['retry-after'])}`);
      }
      t.check(read[0]![1], errorAnswer(400, 'malformed request body'), 'malformed body');
      t.check(read[1]![1], errorAnswer(400, 'invalid order id'), 'invalid id');
    },
  ),
  // RFC 9112 §9.6: a server that closes while the client is still sending must not reset the connection
  // under the answer (a relay drops it, and the client sees EPIPE instead of 413). The client here keeps
  // sending a MiB after the 413 and its FIN: the server goes on reading it, and closes once the client does.
  flow(
    'answer-before-the-body-survives-a-client-still-sending',
    ['HTTP-close-linger', 'LIMIT-body-size'],
    { api: 'rest', drivers: HTTP1_ONLY },
    async (t) => {
      const base = t.target.baseUrl;
      const head = `POST /auth/login HTTP/1.1\r\nHost: ${host(base)}\r\nContent-Type: application/json\r\nContent-Length: ${4 * 1024 * 1024}\r\n\r\n`;
      const kept = await pastRateLimit(() => keepSendingAfterAnswer(base, head, 1024 * 1024));
      t.check(kept.reply, errorAnswer(413, 'request body too large'), '413');
      t.assert(kept.reply.headers?.['connection'] === 'close', `Connection ${String(kept.reply.headers?.['connection'])}, expected close`);
      t.assert(kept.errors.length === 0, `the connection was reset under a client still sending: ${kept.errors.join(', ')}`);
    },
  ),
  ...(
    [
      ['no-content-type', {}],
      ['json-utf8', { 'content-type': 'application/json; charset=utf-8' }],
      ['json-suffix', { 'content-type': 'application/vnd.orders+json' }],
      // A parameter other than charset says nothing about the encoding.
      ['json-other-parameter', { 'content-type': 'application/json; version=2' }],
      ['json-utf8-after-other-parameter', { 'content-type': 'application/json; version=2; charset=utf-8' }],
    ] as const
  ).map(([tag, headers]) =>
    restCase(`login-body-${tag}-is-accepted`, ['HTTP-json-content-type', 'LOGIN-200'], login(headers), {
      status: 200,
      body: { shape: 'LoginResponse' },
    }),
  ),
];

export const ABUSE_CASES: Case[] = [
  ...loginGateCases,
  ...timeoutCases,
  ...parserCases,
  ...headerCases,
  ...tokenCases,
  ...headCases,
  ...contentTypeCases,
];
