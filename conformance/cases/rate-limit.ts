import { flow, type Case, type FlowContext } from '../case-model.ts';
import type { RawRequest, Reply } from '../drivers/driver.ts';
import { openapiOperations } from '../../test/openapi/openapi-operations.ts';
import { recordDecisions } from '../../test/rate-limit/load.ts';
import { documentedRequest } from './contract.ts';
import { MSG } from './messages.ts';
import { parseScrape } from './observability.ts';

/**
 * Spec 8 rate limit on the REST side: our keying and burst choice, the 429 of every operation, and what
 * the limiter promises beyond it: one header set on every REST transport, the route label of a
 * throttled request, keying behind trusted proxies, and the shared store's fallback.
 * RATE_LIMIT_RPS=1 throughout: a bucket of one token refilled each second, so a refusal needs only two
 * requests inside a second however slow the machine (at 5 the bucket refilled every 200 ms and a slow
 * burst never met a 429); the checks count refusals ("at least one"), never time them.
 */

const INTEGER = /^(0|[1-9]\d*)$/;
const POSITIVE = /^[1-9]\d*$/;
const ATTEMPTS = 10;
const TOO_MANY = { http: { status: 429, error: MSG.rateLimited, headers: { 'retry-after': POSITIVE } } } as const;

/** Calls until one answers 429, at most ATTEMPTS times (each operation *can* be limited: RATE-429-all); returns every reply. */
async function untilRefused(call: (i: number) => Promise<Reply>): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < ATTEMPTS && replies.at(-1)?.status !== 429; i++) replies.push(await call(i));
  return replies;
}

/** Polls until the bucket refilled and `call` is served (the bound only stops a hang). */
async function untilServed(t: FlowContext, call: () => Promise<Reply>): Promise<Reply> {
  let reply = await call();
  for (let i = 0; i < 40 && reply.status === 429; i++) {
    await t.sleep(250);
    reply = await call();
  }
  return reply;
}

/** The rate-limit header set (rule RATE-headers); none of the old dialects. */
function checkHeaderSet(t: FlowContext, reply: Reply, label: string): void {
  const headers = reply.headers ?? {};
  t.assert(headers['ratelimit-limit'] === '1', `${label}: RateLimit-Limit is ${headers['ratelimit-limit']}, expected 1 (RATE_LIMIT_RPS)`);
  t.assert(
    INTEGER.test(headers['ratelimit-remaining'] ?? ''),
    `${label}: RateLimit-Remaining ${headers['ratelimit-remaining']} is not a whole number`,
  );
  t.assert(
    POSITIVE.test(headers['ratelimit-reset'] ?? ''),
    `${label}: RateLimit-Reset ${headers['ratelimit-reset']} is not whole seconds >= 1 (a delta, not an epoch)`,
  );
  const stale = Object.keys(headers).filter(
    (name) => name.startsWith('x-ratelimit-') || name === 'ratelimit' || name === 'ratelimit-policy',
  );
  t.assert(stale.length === 0, `${label}: another dialect is sent too: ${stale.join(', ')}`);
  if (reply.status === 429)
    t.assert(POSITIVE.test(headers['retry-after'] ?? ''), `${label}: Retry-After ${headers['retry-after']} is not whole seconds >= 1`);
  else t.assert(headers['retry-after'] === undefined, `${label}: Retry-After on a ${reply.status}`);
}

const ONE_RPS = { env: { RATE_LIMIT_RPS: '1' } };

export const RATE_LIMIT_CASES: Case[] = [
  flow(
    'rate-limit-burst-then-429',
    ['LIMIT-rate', 'LIMIT-rate-keying', 'RATE-429-body', 'RATE-429-all', 'CHAIN-order'],
    { api: 'rest', needs: ['logs', 'admin'], target: ONE_RPS },
    async (t) => {
      const me = await t.user(); // spends the one token
      const path = `/orders/${crypto.randomUUID()}`;
      const replies = await untilRefused(() => t.driver.raw!({ method: 'GET', path, headers: { authorization: me.auth } }));
      const limited = replies.filter((r) => r.status === 429);
      const served = replies.filter((r) => r.status !== 429);
      t.assert(limited.length > 0, `no 429 in ${replies.length} requests at RATE_LIMIT_RPS=1`);
      // Refills are allowed for (a slow machine), but never the whole burst: the bucket holds one token.
      t.assert(served.length < replies.length, `${served.length} of ${replies.length} requests served at RATE_LIMIT_RPS=1`);
      t.check(limited[0]!, TOO_MANY, '429 response');

      // Every business operation is limited (spec 4.1 table), login included: each one the document declares.
      for (const op of openapiOperations()) {
        const request = documentedRequest(op, { authorization: me.auth });
        t.check((await untilRefused(() => t.driver.raw!(request))).at(-1)!, TOO_MANY, `${op.operationId} while limited`);
      }

      // Keyed per client address: another loopback source address has its own bucket.
      const other = await t.via('rest-http1').raw!({
        method: 'GET',
        path: '/orders',
        headers: { authorization: me.auth },
        localAddress: '127.0.0.2',
      });
      t.check(other, { http: { status: 200 } }, 'same user from another client address');

      // A 429 is still traced, counted and logged: the limiter sits inside those layers (spec 4.3).
      const logged = await t.waitFor(() => t.logs().find((l) => l.msg === 'request' && l['status'] === 429), '`request` log line of a 429');
      t.assert(logged['method'] !== undefined, 'the 429 request line has no method');
      const counted = parseScrape(await t.scrape()).filter((s) => s.name === 'orders_http_requests_total' && s.labels['status'] === '429');
      t.assert(counted.length > 0, 'no orders_http_requests_total sample with status="429"');

      // Refilled at RATE_LIMIT_RPS per second: served again (polled; the deadline only stops a hang).
      t.check(await untilServed(t, () => t.driver.listOrders(me.auth, {})), { http: { status: 200 } }, 'the limit refills');
    },
  ),
  flow('rate-limit-header-set', ['RATE-headers', 'RATE-429-body'], { api: 'rest', target: ONE_RPS }, async (t) => {
    const me = await t.user(); // login spends the token; its reply carries the set too
    const replies = await untilRefused(() => t.driver.raw!({ method: 'GET', path: '/orders', headers: { authorization: me.auth } }));
    const refused = replies.at(-1)!;
    t.assert(refused.status === 429, `no 429 in ${ATTEMPTS} requests at RATE_LIMIT_RPS=1`);
    t.check(refused, TOO_MANY, '429');
    checkHeaderSet(t, refused, '429');
    t.assert(
      refused.headers?.['ratelimit-remaining'] === '0',
      `429: RateLimit-Remaining is ${refused.headers?.['ratelimit-remaining']}, expected 0`,
    );
    // An admitted request carries the same set (a 200 of a business operation once the bucket refills).
    const served = await untilServed(t, () => t.driver.listOrders(me.auth, {}));
    t.check(served, { http: { status: 200 } }, 'listOrders once refilled');
    checkHeaderSet(t, served, '200');
  }),
  flow(
    'rate-limit-429-metrics-route-label',
    ['METRICS-429-route', 'METRICS-route-label'],
    { api: 'rest', needs: ['admin'], target: ONE_RPS },
    async (t) => {
      const id = crypto.randomUUID();
      const replies = await untilRefused(() => t.driver.raw!({ method: 'GET', path: `/orders/${id}` }));
      t.assert(replies.at(-1)?.status === 429, `no 429 in ${ATTEMPTS} requests at RATE_LIMIT_RPS=1`);
      const samples = parseScrape(await t.scrape()).filter((s) => s.name === 'orders_http_requests_total' && s.labels['status'] === '429');
      const labelled = samples.filter((s) => s.labels['route'] === 'GET /orders/{id}' && s.labels['method'] === 'GET');
      t.assert(
        labelled.length === 1 && labelled[0]!.value >= 1,
        `no orders_http_requests_total{route="GET /orders/{id}",status="429"}: ${JSON.stringify(samples)}`,
      );
      const unmatched = samples.filter((s) => s.labels['route'] === 'unmatched');
      t.assert(unmatched.length === 0, `a throttled request of a known route is labelled unmatched: ${JSON.stringify(unmatched)}`);
      // A throttled request of a path no route has is still refused (429, not a failure), and stays "unmatched".
      const unknown = await untilRefused(() => t.driver.raw!({ method: 'GET', path: '/no-such-route' }));
      t.check(unknown.at(-1)!, TOO_MANY, 'a throttled request of an unknown path');
      const after = parseScrape(await t.scrape()).filter((s) => s.name === 'orders_http_requests_total' && s.labels['status'] === '429');
      t.assert(
        after.some((s) => s.labels['route'] === 'unmatched' && s.labels['method'] === 'GET' && s.value >= 1),
        `no orders_http_requests_total{route="unmatched",status="429"} for a throttled unknown path: ${JSON.stringify(after)}`,
      );
    },
  ),
  flow(
    'rate-limit-ignores-forwarded-for-by-default',
    ['LIMIT-rate-trust-proxy', 'LIMIT-rate-keying'],
    { api: 'rest', target: ONE_RPS },
    async (t) => {
      // Without TRUST_PROXY a client naming a new address in each request still has one budget (its TCP peer).
      const replies = await untilRefused((i) =>
        t.driver.raw!({ method: 'GET', path: '/orders', headers: { 'x-forwarded-for': `203.0.113.${i + 1}` } }),
      );
      t.assert(
        replies.some((r) => r.status === 429),
        `X-Forwarded-For chose the bucket: ${replies.length} requests with distinct forwarded addresses and no 429`,
      );
    },
  ),
  // The test client's connections come from loopback: it plays the trusted proxy.
  flow(
    'rate-limit-trusted-proxy-rightmost-untrusted-hop',
    ['LIMIT-rate-trust-proxy', 'LIMIT-rate-keying'],
    { api: 'rest', target: { env: { RATE_LIMIT_RPS: '1', TRUST_PROXY: '127.0.0.0/8,::1' } } },
    async (t) => {
      // Each forwarded client its own budget: ten distinct clients behind the proxy, none refused.
      const distinct = await untilRefused((i) =>
        t.driver.raw!({ method: 'GET', path: '/orders', headers: { 'x-forwarded-for': `198.51.100.${i + 1}` } }),
      );
      t.assert(
        distinct.every((r) => r.status === 401),
        `distinct clients behind a trusted proxy shared a budget: ${distinct.map((r) => r.status).join(',')}`,
      );
      // A client forging entries left of the address the proxy appended keeps its own one budget.
      const forged = await untilRefused((i) =>
        t.driver.raw!({ method: 'GET', path: '/orders', headers: { 'x-forwarded-for': `192.0.2.${i + 1}, 203.0.113.77` } }),
      );
      t.assert(
        forged.some((r) => r.status === 429),
        `a forged left-hand X-Forwarded-For entry chose the bucket: ${forged.map((r) => r.status).join(',')}`,
      );
    },
  ),
  flow(
    'rate-limit-shared-store-falls-back-per-process',
    ['LIMIT-rate-store'],
    { api: 'rest', backends: ['real'], needs: ['inProcess', 'logs'], target: { env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_STORE: 'redis' } } },
    async (t) => {
      const store = t.target.hooks!.app.components.find((c) => c.name === 'rate-limit-store');
      t.assert(store?.stop !== undefined && store.init !== undefined, 'RATE_LIMIT_STORE=redis built no rate-limit-store component');
      const request = (): RawRequest => ({ method: 'GET', path: '/orders' });
      let replies: Reply[] = [];
      const shared = await recordDecisions(async () => void (replies = await untilRefused(() => t.driver.raw!(request()))));
      t.assert(
        replies.at(-1)?.status === 429 && shared.every((e) => e.source === 'shared'),
        `limited through Redis: ${replies.map((r) => r.status).join(',')} from ${shared.map((e) => e.source).join(',')}`,
      );

      // The store's connection goes away (an outage as this process sees it): the local bucket decides.
      await store!.stop!();
      try {
        const local = await recordDecisions(async () => void (replies = await untilRefused(() => t.driver.raw!(request()))));
        t.assert(
          local.length > 0 && local.every((e) => e.source === 'local'),
          `not decided locally during the outage: ${local.map((e) => e.source).join(',')}`,
        );
        t.assert(replies[0]?.status === 401, `failed closed: the first request during the outage got ${replies[0]?.status}`);
        t.assert(replies.at(-1)?.status === 429, `failed open: ${replies.length} requests during the outage and no 429`);
        const warned = t.logs().filter((l) => l.msg === 'rate limit: shared store unavailable, limiting per process');
        t.assert(warned.length === 1, `expected one outage warning, got ${warned.length}`);
      } finally {
        await store!.init!();
      }
      const again = await recordDecisions(async () => void (await t.driver.raw!(request())));
      t.assert(
        again.every((e) => e.source === 'shared'),
        'not decided by Redis again once the store reconnected',
      );
    },
  ),
];
