import type { Case } from '../case-model.ts';
import type { Reply } from '../drivers/driver.ts';
import { parseScrape } from './observability.ts';
import { MSG } from './messages.ts';

/** Spec 8 rate limit on the REST side, our keying and burst choice, and the 429 of every operation. */

// One token a second: a refusal needs two requests inside a second, however slow the machine (at 5 the
// bucket refilled every 200 ms and a slow burst never met a 429).
const RPS = 1;
const BURST_REQUESTS = 10;
const TOO_MANY = { http: { status: 429, error: MSG.rateLimited, headers: { 'retry-after': /^[1-9]\d*$/ } } } as const;

/** Calls until one answers 429, at most BURST_REQUESTS times (each operation *can* be limited: RATE-429-all). */
async function untilLimited(call: () => Promise<Reply>): Promise<Reply> {
  let reply = await call();
  for (let i = 1; i < BURST_REQUESTS && reply.status !== 429; i++) reply = await call();
  return reply;
}

const cases: Case[] = [
  {
    kind: 'flow',
    name: 'rate-limit-burst-then-429',
    rules: ['LIMIT-rate', 'LIMIT-rate-keying', 'RATE-429-body', 'RATE-429-all', 'CHAIN-order'],
    api: 'rest',
    needs: ['logs', 'admin'],
    target: { env: { RATE_LIMIT_RPS: String(RPS) } },
    async run(t) {
      const me = await t.user(); // spends the one token
      const path = `/orders/${crypto.randomUUID()}`;
      const replies: Reply[] = [];
      for (let i = 0; i < BURST_REQUESTS; i++) replies.push(await t.driver.raw!({ method: 'GET', path, headers: { authorization: me.auth } }));
      const limited = replies.filter((r) => r.status === 429);
      const served = replies.filter((r) => r.status !== 429);
      t.assert(limited.length > 0, `no 429 in ${replies.length} requests at RATE_LIMIT_RPS=${RPS}`);
      // Refills are allowed for (a slow machine), but never the whole burst: the bucket holds one token.
      t.assert(served.length < replies.length, `${served.length} of ${replies.length} requests served at RATE_LIMIT_RPS=${RPS}`);
      t.check(limited[0]!, TOO_MANY, '429 response');

      // Every business operation is limited (spec 4.1 table), login included.
      const operations: [string, () => Promise<Reply>][] = [
        ['login', () => t.driver.login({ username: me.username, password: me.password })],
        ['create', () => t.driver.createOrder(me.auth, { item: 'x', quantity: 1 })],
        ['get', () => t.driver.getOrder(me.auth, crypto.randomUUID())],
        ['list', () => t.driver.listOrders(me.auth, {})],
        ['recent', () => t.driver.recent(me.auth)],
      ];
      for (const [name, call] of operations) t.check(await untilLimited(call), TOO_MANY, `${name} while limited`);

      // Keyed per client address: another loopback source address has its own bucket.
      const other = await t.via('rest-http1').raw!({ method: 'GET', path: '/orders', headers: { authorization: me.auth }, localAddress: '127.0.0.2' });
      t.check(other, { http: { status: 200 } }, 'same user from another client address');

      // A 429 is still traced, counted and logged: the limiter sits inside those layers (spec 4.3).
      const logged = await t.waitFor(() => t.logs().find((l) => l.msg === 'request' && l['status'] === 429), '`request` log line of a 429');
      t.assert(logged['method'] !== undefined, 'the 429 request line has no method');
      const counted = parseScrape(await t.scrape()).filter((s) => s.name === 'orders_http_requests_total' && s.labels['status'] === '429');
      t.assert(counted.length > 0, 'no orders_http_requests_total sample with status="429"');

      // Refilled at RATE_LIMIT_RPS per second: served again (polled; the deadline only stops a hang).
      let again = await t.driver.listOrders(me.auth, {});
      for (let i = 0; i < 40 && again.status === 429; i++) {
        await t.sleep(250);
        again = await t.driver.listOrders(me.auth, {});
      }
      t.check(again, { http: { status: 200 } }, 'the limit refills');
    },
  },
];

export const RATE_LIMIT_CASES: Case[] = cases;
