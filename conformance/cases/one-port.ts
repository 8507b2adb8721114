import { flow, type Case } from '../case-model.ts';
import { encodeRequest } from '../drivers/grpc.ts';
import { parseScrape, sampleSum } from './observability.ts';

/** Spec 4.4 and 9 rule 1: the one-port executable's dispatch, auth interceptor and gRPC surface. */

const GRPC_ONLY = ['grpc'];

const total = (text: string): number => sampleSum(parseScrape(text), 'orders_http_requests_total');

export const ONE_PORT_CASES: Case[] = [
  flow('http1-with-grpc-content-type-goes-to-rest', ['ONEPORT-dispatch'], { transports: GRPC_ONLY, api: 'rest' }, async (t) => {
    const http1 = t.via('rest-http1');
    const me = await t.user();
    const doc = await http1.raw!({ method: 'GET', path: '/openapi.yaml', headers: { 'content-type': 'application/grpc' } });
    t.check(doc, { http: { status: 200, textIncludes: ['openapi:'] } }, 'HTTP/1.1 GET /openapi.yaml with content-type application/grpc');
    t.assert(doc.httpVersion === '1.1', `answered over HTTP/${doc.httpVersion}`);
    const list = await http1.raw!({
      method: 'GET',
      path: '/orders',
      headers: { 'content-type': 'application/grpc', authorization: me.auth },
    });
    t.check(
      list,
      { http: { status: 200, body: { shape: 'ListOrdersResponse' } } },
      'HTTP/1.1 GET /orders with content-type application/grpc',
    );
  }),
  flow(
    'http2-without-grpc-content-type-goes-to-rest',
    ['ONEPORT-dispatch', 'ONEPORT-h1-h2c'],
    { transports: GRPC_ONLY, api: 'rest' },
    async (t) => {
      const h2c = t.via('rest-h2c');
      const me = await t.user();
      const doc = await h2c.raw!({ method: 'GET', path: '/openapi.yaml' });
      t.check(doc, { http: { status: 200, textIncludes: ['openapi:'] } }, 'HTTP/2 GET /openapi.yaml');
      t.assert(doc.httpVersion === '2.0', `answered over HTTP/${doc.httpVersion}`);
      const json = await h2c.raw!({
        method: 'GET',
        path: '/orders',
        headers: { 'content-type': 'application/json', authorization: me.auth },
      });
      t.check(
        json,
        { http: { status: 200, body: { shape: 'ListOrdersResponse' } } },
        'HTTP/2 GET /orders with content-type application/json',
      );
    },
  ),
  flow('http2-with-grpc-content-type-goes-to-grpc', ['ONEPORT-dispatch'], { transports: GRPC_ONLY, api: 'rest' }, async (t) => {
    // A REST path with the gRPC content type over HTTP/2 is the gRPC server's, not REST's.
    const reply = await t.via('rest-h2c').raw!({
      method: 'POST',
      path: '/auth/login',
      headers: { 'content-type': 'application/grpc', te: 'trailers' },
      body: Buffer.alloc(5),
    });
    const grpcAnswer =
      (reply.headers?.['content-type'] ?? '').startsWith('application/grpc') || reply.headers?.['grpc-status'] !== undefined;
    t.assert(
      grpcAnswer,
      `HTTP/2 + application/grpc was answered by REST: ${reply.status} ${reply.headers?.['content-type']} ${reply.text?.slice(0, 100)}`,
    );
  }),
  flow(
    'one-port-serves-http1-h2c-and-grpc',
    ['ONEPORT-h1-h2c', 'ONEPORT-dispatch', 'AUTH-7-independent', 'GRPC-service'],
    { transports: GRPC_ONLY },
    async (t) => {
      const me = await t.user();
      const credentials = { username: me.username, password: me.password };
      const http1 = await t.via('rest-http1').login(credentials);
      const h2c = await t.via('rest-h2c').login(credentials);
      const rpc = await t.via('grpc').login(credentials);
      t.assert(http1.status === 200 && http1.httpVersion === '1.1', `HTTP/1.1 login: ${http1.status} over ${http1.httpVersion}`);
      t.assert(h2c.status === 200 && h2c.httpVersion === '2.0', `h2c login: ${h2c.status} over ${h2c.httpVersion}`);
      t.assert(rpc.codeName === 'OK', `gRPC Login: ${rpc.codeName} ${rpc.message}`);
      // A token from any wire works on every other (spec 5 rule 7).
      for (const [from, reply] of [
        ['HTTP/1.1', http1],
        ['h2c', h2c],
        ['gRPC', rpc],
      ] as const) {
        const auth = `Bearer ${(reply.body as { token: string }).token}`;
        for (const name of ['rest-http1', 'rest-h2c', 'grpc'] as const) {
          const list = await t.via(name).listOrders(auth, {});
          t.assert(
            list.status === 200 || list.codeName === 'OK',
            `token from ${from} login refused on ${name}: ${list.status ?? list.codeName}`,
          );
        }
      }
    },
  ),
  // Compares a recent list exactly: a shared account carries views of earlier cases.
  flow(
    'grpc-and-rest-share-the-session',
    ['GRPC-auth-context', 'AUTH-6-context', 'SESSION-view-on-get', 'AUTH-7-independent'],
    { transports: GRPC_ONLY, api: 'grpc', needs: ['users'] },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      t.check(await t.driver.getOrder(me.auth, id), { grpc: { code: 'OK' } }, 'GetOrder over gRPC');
      const rest = await t.via('rest-http1').recent(me.auth);
      t.check(rest, { http: { status: 200, body: { recent: [id] } } }, 'REST /me/recent sees the gRPC view');
      const viaRest = await t.via('rest-h2c').getOrder(me.auth, id);
      t.check(viaRest, { http: { status: 200 } }, 'REST fetch of the same order');
      t.check(await t.driver.recent(me.auth), { grpc: { code: 'OK', body: { recent: [id] } } }, 'gRPC Recent after both');
    },
  ),
  flow(
    'grpc-not-observed-by-http-middleware',
    ['CHAIN-R3-rest-only', 'ONEPORT-mw-rest-only'],
    { transports: GRPC_ONLY, api: 'grpc', needs: ['spans', 'admin', 'logs'] },
    async (t) => {
      const me = await t.user();
      const before = total(await t.scrape());
      const spansBefore = t.spans().length;
      const requestLinesBefore = t.logs().filter((l) => l.msg === 'request').length;
      const id = await t.order(me);
      t.check(await t.driver.getOrder(me.auth, id), { grpc: { code: 'OK' } }, 'GetOrder');
      t.check(await t.driver.listOrders(me.auth, {}), { grpc: { code: 'OK' } }, 'ListOrders');
      t.check(await t.driver.getOrder(me.auth, crypto.randomUUID()), { grpc: { code: 'NOT_FOUND' } }, 'GetOrder unknown');
      t.assert(total(await t.scrape()) === before, 'gRPC calls were counted in orders_http_requests_total');
      // The gRPC layer's own spans (rule TRACE-grpc), never the HTTP middleware's.
      // A process exports its spans in batches: wait until the three calls' spans are there, then look at all.
      await t.waitFor(
        () =>
          t
            .spans()
            .slice(spansBefore)
            .filter((s) => ['GetOrder', 'ListOrders'].includes(String(s.attributes['rpc.method']))).length >= 3,
        'the spans of the three calls',
      );
      const spans = t.spans().slice(spansBefore);
      t.assert(
        spans.every((s) => s.attributes['rpc.system'] === 'grpc' && !Object.keys(s.attributes).some((k) => k.startsWith('http.'))),
        'gRPC calls got HTTP spans',
      );
      t.assert(t.logs().filter((l) => l.msg === 'request').length === requestLinesBefore, 'gRPC calls got HTTP request log lines');
    },
  ),
  flow(
    'grpc-not-rate-limited',
    ['CHAIN-R3-rest-only', 'ONEPORT-mw-rest-only'],
    { transports: GRPC_ONLY, api: 'grpc', target: { env: { RATE_LIMIT_RPS: '2' } } },
    async (t) => {
      const me = await t.user();
      for (let i = 0; i < 12; i++)
        t.check(await t.driver.listOrders(me.auth, {}), { grpc: { code: 'OK' } }, `RPC ${i + 1} of 12 at RATE_LIMIT_RPS=2`);
      const rest = [];
      for (let i = 0; i < 6; i++) rest.push((await t.via('rest-http1').listOrders(me.auth, {})).status);
      t.assert(rest.includes(429), `the REST side on the same port was not limited at RATE_LIMIT_RPS=2: ${rest.join(', ')}`);
    },
  ),
  flow('grpc-reflection-not-registered', ['GRPC-no-reflection'], { transports: GRPC_ONLY, api: 'grpc' }, async (t) => {
    for (const service of ['grpc.reflection.v1alpha.ServerReflection', 'grpc.reflection.v1.ServerReflection']) {
      const reply = await t.driver.rawRpc!(`/${service}/ServerReflectionInfo`, new Uint8Array());
      t.check(reply, { grpc: { code: 'UNIMPLEMENTED' } }, service);
    }
  }),
  flow(
    'grpc-login-exempt-even-with-bad-metadata',
    ['GRPC-auth-exempt', 'GRPC-service', 'AUTH-2-login-only'],
    { transports: GRPC_ONLY, api: 'grpc' },
    async (t) => {
      const me = await t.user();
      const login = encodeRequest('Login', { username: me.username, password: me.password });
      const reply = await t.driver.rawRpc!('/ordersv1.Orders/Login', login, 'Bearer not-a-token');
      t.check(reply, { grpc: { code: 'OK' } }, 'Login with an invalid authorization value');
    },
  ),
  flow(
    'grpc-package-is-the-version',
    ['VER-1-grpc-package', 'GRPC-service', 'VER-4-deprecation'],
    { transports: GRPC_ONLY, api: 'grpc' },
    async (t) => {
      const me = await t.user();
      const login = encodeRequest('Login', { username: me.username, password: me.password });
      for (const path of ['/ordersv2.Orders/Login', '/orders.Orders/Login', '/Orders/Login', '/ordersv1.Orders/SignUp']) {
        t.check(await t.driver.rawRpc!(path, login), { grpc: { code: 'UNIMPLEMENTED' } }, path);
      }
      t.check(await t.driver.rawRpc!('/ordersv1.Orders/Login', login), { grpc: { code: 'OK' } }, '/ordersv1.Orders/Login');
    },
  ),
  flow('grpc-all-methods-unary', ['GRPC-methods', 'EVT-5-no-other'], { transports: GRPC_ONLY, api: 'grpc' }, async (t) => {
    // Every call of the driver is unary; a streaming handler would not complete a unary call.
    const { me, id } = await t.userWithOrder();
    for (const reply of [await t.driver.getOrder(me.auth, id), await t.driver.listOrders(me.auth, {}), await t.driver.recent(me.auth)]) {
      t.check(reply, { grpc: { code: 'OK' } }, 'unary call');
    }
  }),
];
