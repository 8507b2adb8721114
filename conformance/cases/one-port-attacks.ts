import { readFileSync, rmSync } from 'node:fs';
import { connect, constants as h2, type ClientHttp2Session } from 'node:http2';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { constants as zlibConstants, gzipSync } from 'node:zlib';
import { create } from '@bufbuild/protobuf';
import { flow, processCase, type Actor, type Case, type FlowContext } from '../case-model.ts';
import { encodeRequest } from '../drivers/grpc.ts';
import { h2Request } from '../drivers/rest-h2c.ts';
import { rawHttp1 } from './raw-http1.ts';
import { grpcFrame, rawGrpc, type RawGrpcReply } from '../../test/grpc/raw-grpc.ts';
import { OrderSchema, RecentRequestSchema } from '../../src/gen/ordersv1/orders_pb.js';
import { createOnePortServer, createUnaryServer, HTTP2_RESET_ALLOWANCE } from '../../packages/one-port-grpc/index.ts';
import { startInProcess } from '../../test/support/in-process-app.ts';
import { listenLocal } from '../../test/support/ports.ts';
import { selfSignedCert } from '../../test/support/self-signed-cert.ts';
import { HANG_GUARD_MS, settled } from '../../test/support/eventually.ts';

/**
 * Each attack on the one-port listener, driven against orders-grpc, then a normal
 * REST and gRPC request must still be answered and the process's RSS must not have grown by 64 MB.
 * Attack loops are bounded in count and time, loopback only. In process RSS is the test process's own
 * (the in-process target shares it), so the bound also covers the attacking client; black-box it is the
 * service's, as its admin scrape reports it (process_resident_memory_bytes).
 */

const GRPC_ONLY = ['grpc'];
const RSS_BUDGET = 64 * 1024 * 1024;
const GET_ORDER = '/ordersv1.Orders/GetOrder';
/** Requests at once on one HTTP/2 session (H2-limits): the client must queue what the stream limit holds back. */
const REQUESTS_ON_ONE_SESSION = 500;

async function stillServes(t: FlowContext, me: Actor, id: string, when: string): Promise<void> {
  t.check(await t.via('grpc').getOrder(me.auth, id), { grpc: { code: 'OK' } }, `gRPC GetOrder ${when}`);
  t.check(await t.via('rest-http1').getOrder(me.auth, id), { http: { status: 200 } }, `REST GET /orders/{id} ${when}`);
}

/** The service's resident memory: the test process's in process, the scrape's black-box. */
async function serviceRss(t: FlowContext): Promise<number> {
  if (t.target.hooks !== undefined) return process.memoryUsage.rss();
  const match = /^process_resident_memory_bytes (\S+)$/m.exec(await t.scrape());
  t.assert(match !== null, 'process_resident_memory_bytes is not on /metrics');
  return Number(match![1]);
}

async function rssGrowth(t: FlowContext, before: number): Promise<number> {
  return (await serviceRss(t)) - before;
}

/** An HTTP/2 session to `origin`, once the server's SETTINGS have arrived; session errors are ignored. */
export function h2session(origin: string): Promise<ClientHttp2Session> {
  const session = connect(origin);
  session.on('error', () => undefined);
  return new Promise((resolve) => session.once('remoteSettings', () => resolve(session)));
}

export const ONE_PORT_ATTACK_CASES: Case[] = [
  flow(
    'rapid-reset-from-two-connections-is-cut-and-the-port-still-answers',
    ['H2-rapid-reset', 'GRPC-cancel', 'H2-limits'],
    { transports: GRPC_ONLY, api: 'grpc', needs: ['admin'], target: { isolated: true } },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      const rss = await serviceRss(t);
      const message = grpcFrame(encodeRequest('GetOrder', { id }));
      // Two connections at once, each HEADERS (+ the message) then RST_STREAM, up to 1,000 streams.
      const attack = async (): Promise<{ sent: number; goaway: number | undefined }> => {
        const session = await h2session(t.target.baseUrl);
        const max = session.remoteSettings.maxConcurrentStreams ?? Number.POSITIVE_INFINITY;
        t.assert(max >= 16 && max <= 256, `SETTINGS_MAX_CONCURRENT_STREAMS is ${max}`);
        let goaway: number | undefined;
        session.once('goaway', (code: number) => (goaway = code));
        let sent = 0;
        const closed = new Promise((resolve) => session.once('close', resolve));
        while (sent < 1_000 && goaway === undefined && !session.destroyed && !session.closed) {
          const grpcCall = sent % 2 === 0;
          const stream = grpcCall
            ? session.request({
                ':method': 'POST',
                ':path': GET_ORDER,
                'content-type': 'application/grpc',
                te: 'trailers',
                authorization: me.auth,
              })
            : session.request({ ':method': 'GET', ':path': `/orders/${id}`, authorization: me.auth });
          stream.on('error', () => undefined);
          if (grpcCall) stream.write(message);
          stream.close(h2.NGHTTP2_CANCEL);
          sent += 1;
          if (sent % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
        }
        // The guard cuts the connection, however long the server takes to read the flood; one never cut is
        // what the case refutes, and the hang guard ends that wait.
        await settled(closed, 'the attacked connection to be cut');
        session.destroy();
        return { sent, goaway };
      };
      const outcomes = await Promise.all([attack(), attack()]);
      // The guard answers ENHANCE_YOUR_CALM. On a busy machine the server reads the flood in large batches,
      // and Node frees a reset stream's slot only after the batch: past SETTINGS_MAX_CONCURRENT_STREAMS it
      // refuses the next streams, and after 100 refusals (maxSessionRejectedStreams) nghttp2 ends the
      // session itself with INTERNAL_ERROR before the guard looks. Either way the connection is cut.
      const cut = [h2.NGHTTP2_ENHANCE_YOUR_CALM, h2.NGHTTP2_INTERNAL_ERROR];
      for (const [i, o] of outcomes.entries()) {
        t.assert(
          o.goaway !== undefined && cut.includes(o.goaway),
          `connection ${i + 1}: ${o.sent} resets and no GOAWAY ENHANCE_YOUR_CALM or INTERNAL_ERROR (got ${String(o.goaway)})`,
        );
        t.assert(
          o.sent > HTTP2_RESET_ALLOWANCE,
          `connection ${i + 1} was cut after ${o.sent} resets, within the allowance of ${HTTP2_RESET_ALLOWANCE}`,
        );
      }
      await stillServes(t, me, id, 'right after the attack');
      const grown = await rssGrowth(t, rss);
      t.assert(grown < RSS_BUDGET, `RSS grew by ${(grown / 2 ** 20).toFixed(0)} MiB during the attack`);
    },
  ),
  flow(
    'gzip-bombs-stop-at-the-message-limit',
    ['GRPC-message-size', 'GRPC-compression', 'GRPC-auth-before-body'],
    { transports: GRPC_ONLY, api: 'grpc', needs: ['admin'] },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      // ~200 KB of gzip that inflates to 200 MiB: 200 gzip members of 1 MiB of zeros each, which a gzip reader
      // inflates one after the other (RFC 1952 2.2), for a thousandth of the CPU of deflating 200 MiB at once.
      const member = gzipSync(Buffer.alloc(1024 * 1024), { strategy: zlibConstants.Z_RLE });
      const bomb = grpcFrame(Buffer.concat(Array.from({ length: 200 }, () => member)), true);
      const rss = await serviceRss(t);
      const signed = await Promise.all(
        Array.from({ length: 4 }, () => rawGrpc(t.target.baseUrl, GET_ORDER, bomb, { authorization: me.auth, 'grpc-encoding': 'gzip' })),
      );
      for (const reply of signed)
        t.assert(
          reply.grpcStatus === '8',
          `gzip bomb with a token: grpc-status ${reply.grpcStatus} ${reply.grpcMessage}, expected RESOURCE_EXHAUSTED`,
        );
      const anonymous = await Promise.all(
        Array.from({ length: 4 }, () => rawGrpc(t.target.baseUrl, GET_ORDER, bomb, { 'grpc-encoding': 'gzip' })),
      );
      for (const reply of anonymous)
        t.assert(reply.grpcStatus === '16', `gzip bomb without a token: grpc-status ${reply.grpcStatus}, expected UNAUTHENTICATED`);
      const grown = await rssGrowth(t, rss);
      t.assert(grown < RSS_BUDGET, `four concurrent gzip bombs grew RSS by ${(grown / 2 ** 20).toFixed(0)} MiB`);
      await stillServes(t, me, id, 'after the bombs');
    },
  ),
  flow(
    'unauthenticated-message-is-never-read',
    ['GRPC-auth-before-body', 'GRPC-message-size'],
    { transports: GRPC_ONLY, api: 'grpc' },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      const huge = grpcFrame(Buffer.alloc(50 * 1024 * 1024));
      const reply = await rawGrpc(t.target.baseUrl, GET_ORDER, huge);
      t.assert(
        reply.grpcStatus === '16' && reply.grpcMessage === 'missing or malformed Authorization header',
        `50 MB without a token: ${reply.grpcStatus} ${reply.grpcMessage}`,
      );
      t.assert(
        reply.bytesWritten < 1024 * 1024,
        `the server let the client send ${reply.bytesWritten} bytes of a message it should not read`,
      );
      const signed = await rawGrpc(t.target.baseUrl, GET_ORDER, huge, { authorization: me.auth });
      t.assert(signed.grpcStatus === '8', `50 MB with a token: ${signed.grpcStatus} ${signed.grpcMessage}, expected RESOURCE_EXHAUSTED`);
      t.assert(
        signed.bytesWritten < 1024 * 1024,
        `the server read ${signed.bytesWritten} bytes of a message whose prefix already declared 50 MB`,
      );
      await stillServes(t, me, id, 'after the oversized messages');
    },
  ),
  flow(
    'malformed-messages-json-subtype-and-huge-timeouts',
    ['GRPC-malformed', 'GRPC-content-type', 'GRPC-timeout-clamp'],
    { transports: GRPC_ONLY, api: 'grpc', needs: ['logs'] },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      const auth = { authorization: me.auth };
      for (const [label, body] of [
        ['not protobuf', grpcFrame(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]))],
        ['wire type 7', grpcFrame(Buffer.from([0x0f, 0x01]))],
        ['truncated', grpcFrame(Buffer.from([0x0a, 0x10, 0x41])).subarray(0, 7)],
        ['two messages', Buffer.concat([grpcFrame(encodeRequest('GetOrder', { id })), grpcFrame(encodeRequest('GetOrder', { id }))])],
      ] as const) {
        const reply = await rawGrpc(t.target.baseUrl, GET_ORDER, body, auth);
        t.assert(
          reply.grpcStatus === '3' && reply.grpcMessage === 'malformed request message',
          `${label}: ${reply.grpcStatus} ${reply.grpcMessage}`,
        );
      }
      const json = await rawGrpc(t.target.baseUrl, GET_ORDER, grpcFrame(Buffer.from(JSON.stringify({ id }))), {
        ...auth,
        'content-type': 'application/grpc+json',
      });
      t.assert(
        json.httpStatus === 415 && json.grpcStatus !== '0',
        `application/grpc+json: HTTP ${json.httpStatus}, grpc-status ${json.grpcStatus}`,
      );
      const warningsBefore = t.logs().filter((l) => l.msg === 'process warning').length;
      for (const timeout of ['99999999H', '2147484S']) {
        const signed = await rawGrpc(t.target.baseUrl, GET_ORDER, grpcFrame(encodeRequest('GetOrder', { id })), {
          ...auth,
          'grpc-timeout': timeout,
        });
        t.assert(signed.grpcStatus === '0', `grpc-timeout ${timeout}: ${signed.grpcStatus} ${signed.grpcMessage}`);
        const anonymous = await rawGrpc(t.target.baseUrl, GET_ORDER, grpcFrame(encodeRequest('GetOrder', { id })), {
          'grpc-timeout': timeout,
        });
        t.assert(anonymous.grpcStatus === '16', `grpc-timeout ${timeout} without a token: ${anonymous.grpcStatus}`);
      }
      await t.sleep(20);
      t.assert(
        t.logs().filter((l) => l.msg === 'process warning').length === warningsBefore,
        'a huge grpc-timeout made the process log a warning',
      );
      await stillServes(t, me, id, 'after the malformed calls');
    },
  ),
  flow(
    'grpc-refusals-carry-their-code-and-message',
    ['GRPC-content-type', 'GRPC-compression', 'GRPC-timeout-clamp', 'GRPC-malformed', 'GRPC-message-size'],
    { transports: GRPC_ONLY, api: 'grpc' },
    async (t) => {
      const { me, id } = await t.userWithOrder();
      const message = encodeRequest('GetOrder', { id });
      const call = (body: Buffer, headers: Record<string, string> = {}) =>
        rawGrpc(t.target.baseUrl, GET_ORDER, body, { authorization: me.auth, ...headers });
      const expect = (label: string, reply: RawGrpcReply, code: string, text: string | undefined): void => {
        t.assert(
          reply.grpcStatus === code && reply.grpcMessage === text,
          `${label}: grpc-status ${reply.grpcStatus} ${JSON.stringify(reply.grpcMessage)}, expected ${code} ${JSON.stringify(text)}`,
        );
        // A refusal is a gRPC answer too (trailers-only, GRPC-content-type): the encoding it is in, protobuf.
        t.assert(
          reply.headers['content-type'] === 'application/grpc+proto',
          `${label}: content-type ${JSON.stringify(reply.headers['content-type'])}, expected "application/grpc+proto"`,
        );
      };
      // GRPC-content-type: HTTP 415 and UNIMPLEMENTED `unsupported content type`.
      const json = await call(grpcFrame(Buffer.from(JSON.stringify({ id }))), { 'content-type': 'application/grpc+json' });
      t.assert(json.httpStatus === 415, `application/grpc+json: HTTP ${json.httpStatus}, expected 415`);
      expect('application/grpc+json', json, '12', 'unsupported content type');
      // GRPC-compression: identity is served, another encoding is UNIMPLEMENTED with its name, a compressed
      // message without grpc-encoding is INTERNAL (even when its bytes are good gzip).
      expect('grpc-encoding identity', await call(grpcFrame(message), { 'grpc-encoding': 'identity' }), '0', undefined);
      expect('grpc-encoding br', await call(grpcFrame(message), { 'grpc-encoding': 'br' }), '12', 'unsupported grpc-encoding br');
      expect(
        'compressed flag without grpc-encoding',
        await call(grpcFrame(gzipSync(message), true)),
        '13',
        'compressed message without grpc-encoding',
      );
      // GRPC-timeout-clamp: a malformed grpc-timeout is INVALID_ARGUMENT `malformed grpc-timeout`.
      for (const timeout of ['1x', '123456789S'])
        expect(`grpc-timeout ${timeout}`, await call(grpcFrame(message), { 'grpc-timeout': timeout }), '3', 'malformed grpc-timeout');
      // GRPC-malformed, GRPC-message-size: bytes after the one message are refused as they arrive, the rest
      // left unread (the server does not take 8 MiB more to say the same thing at the end).
      const trailing = await call(Buffer.concat([grpcFrame(message), Buffer.alloc(8 * 1024 * 1024)]));
      expect('8 MiB after the message', trailing, '3', 'malformed request message');
      t.assert(
        trailing.bytesWritten < 1024 * 1024,
        `the server let the client send ${trailing.bytesWritten} bytes after a unary call's one message`,
      );
      await stillServes(t, me, id, 'after the refused calls');
    },
  ),
  flow(
    'finite-concurrent-streams-and-500-requests-on-one-session',
    ['H2-limits'],
    // Its own HTTP/2 session whatever the column's driver: run once, on the h2c column.
    { transports: GRPC_ONLY, api: 'rest', drivers: ['rest-h2c'], target: { env: { RATE_LIMIT_RPS: '1000000' } } },
    async (t) => {
      const { me } = await t.userWithOrder();
      const session = await h2session(t.target.baseUrl);
      try {
        const max = session.remoteSettings.maxConcurrentStreams ?? Number.POSITIVE_INFINITY;
        t.assert(max >= 16 && max <= 256, `SETTINGS_MAX_CONCURRENT_STREAMS is ${max}`);
        // 500 at once on one session, fifteen times the limit and past every per-session count the server
        // keeps on streams (HTTP2_RESET_ALLOWANCE 64, node's maxSessionRejectedStreams 100): the client
        // queues beyond the limit, none is lost.
        const statuses = await Promise.all(
          Array.from({ length: REQUESTS_ON_ONE_SESSION }, () =>
            h2Request(session, { method: 'GET', path: '/orders?limit=100', headers: { authorization: me.auth } }).then(
              (r) => r.status,
              () => -1,
            ),
          ),
        );
        const failed = statuses.filter((s) => s !== 200);
        t.assert(
          failed.length === 0,
          `${failed.length} of ${REQUESTS_ON_ONE_SESSION} concurrent requests on one session failed: ${[...new Set(failed)].join(', ')}`,
        );
      } finally {
        session.destroy();
      }
    },
  ),
  flow(
    'grpc-health-check-on-the-public-port-follows-readiness',
    ['GRPC-health', 'GRPC-no-reflection'],
    { transports: GRPC_ONLY, api: 'grpc', needs: ['admin'] },
    async (t) => {
      // HealthCheckRequest{} is zero bytes; HealthCheckResponse{status: SERVING} is field 1 = 1.
      const ready = (await fetch(`${t.target.adminUrl}/readyz`)).status;
      const reply = await rawGrpc(t.target.baseUrl, '/grpc.health.v1.Health/Check', grpcFrame(new Uint8Array()));
      t.assert(reply.grpcStatus === '0', `Health/Check without a token: grpc-status ${reply.grpcStatus} ${reply.grpcMessage}`);
      const status = reply.body.subarray(5);
      const serving = status.length === 2 && status[0] === 0x08 && status[1] === 0x01;
      t.assert(
        serving === (ready === 200),
        `Health/Check says ${serving ? 'SERVING' : `not SERVING (${status.toString('hex')})`} while /readyz answers ${ready}`,
      );
      const unknown = await rawGrpc(
        t.target.baseUrl,
        '/grpc.health.v1.Health/Check',
        grpcFrame(Buffer.from([0x0a, 0x03, 0x66, 0x6f, 0x6f])),
      );
      t.assert(unknown.grpcStatus === '5', `Health/Check of service "foo": grpc-status ${unknown.grpcStatus}, expected NOT_FOUND`);
    },
  ),
  // ALPN picks the protocol per connection: h2 carries REST and gRPC on one connection,
  // http/1.1 reaches REST, and cleartext on the TLS port is not served.
  processCase(
    'tls-alpn-serves-rest-and-grpc-on-one-connection',
    ['ONEPORT-tls', 'ONEPORT-dispatch'],
    { transports: GRPC_ONLY },
    async (p) => {
      const { dir, certFile, keyFile } = selfSignedCert();
      const app = await startInProcess({ transport: p.transport!.factory, env: { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } });
      const ca = readFileSync(certFile);
      const session = connect(`https://127.0.0.1:${app.port}`, { ca });
      session.on('error', () => undefined);
      try {
        await new Promise((resolve) => session.once('connect', resolve));
        p.assert(session.alpnProtocol === 'h2', `ALPN chose ${String(session.alpnProtocol)}`);
        const rest = await h2Request(session, { method: 'GET', path: '/openapi.yaml' });
        p.assert(rest.status === 200 && rest.text?.startsWith('openapi:'), `REST over h2+TLS: ${rest.status}`);
        const rpc = await h2Request(session, {
          method: 'POST',
          path: '/grpc.health.v1.Health/Check',
          headers: { 'content-type': 'application/grpc', te: 'trailers' },
          body: grpcFrame(new Uint8Array()),
        });
        p.assert(
          rpc.headers?.['grpc-status'] === '0',
          `gRPC over the same h2+TLS connection: grpc-status ${String(rpc.headers?.['grpc-status'])}`,
        );
        const http1 = await new Promise<{ status?: number; alpn: string | false | null }>((resolve, reject) => {
          const options = { host: '127.0.0.1', port: app.port, path: '/openapi.yaml', ca, ALPNProtocols: ['http/1.1'] };
          const req = httpsRequest(options as RequestOptions, (res) => {
            res.resume();
            resolve({ status: res.statusCode, alpn: (res.socket as TLSSocket).alpnProtocol });
          });
          req.on('error', reject).end();
        });
        p.assert(
          http1.status === 200 && http1.alpn === 'http/1.1',
          `REST over HTTPS with ALPN http/1.1: ${http1.status} (ALPN ${String(http1.alpn)})`,
        );
        const cleartext = await rawHttp1(`http://127.0.0.1:${app.port}`, 'GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n').then(
          (a) => a.reply.status,
          () => undefined,
        );
        p.assert(cleartext === undefined, `cleartext HTTP/1.1 on the TLS port was answered ${String(cleartext)}`);
      } finally {
        session.destroy();
        await app.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  ),
  processCase('http2-stream-and-idle-deadlines-are-enforced', ['H2-stream-deadline', 'H2-idle'], { transports: GRPC_ONLY }, async (p) => {
    // The one-port server of orders-grpc with its deadlines shortened (a case may not wait the real 30 s
    // and 60 s; test/grpc/http2-deadlines.real.test.ts waits out the real stream deadline). The idle deadline
    // stays above the stream one: it is armed again only once every open stream has closed, so a late
    // stream is refused (REFUSED_STREAM) only when it comes more than 400 + 1000 ms after the one before;
    // the client writes all 100 in one turn.
    const grpc = createUnaryServer<undefined>({
      methods: new Map([['/t.T/Recent', { input: RecentRequestSchema, output: OrderSchema, handle: async () => create(OrderSchema, {}) }]]),
      authenticate: () => undefined,
      toStatus: () => ({ code: 13, message: 'internal server error' }),
    });
    // The REST side reads the whole body before answering, as Koa's body parser does.
    const rest = (req: Readable, res: { end(text: string): void }): void => {
      req.resume();
      req.once('end', () => res.end('ok'));
    };
    const front = createOnePortServer({ grpc, rest: rest as never, http2Limits: { streamRequestMs: 400, idleMs: 1000 } });
    const origin = `http://127.0.0.1:${await listenLocal(front.server)}`;
    try {
      const session = await h2session(origin);
      // 100 streams trickling their body (REST and gRPC): every one is reset with CANCEL.
      const codes = await Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const stream = session.request(
            i % 2 === 0
              ? { ':method': 'POST', ':path': '/t.T/Recent', 'content-type': 'application/grpc' }
              : { ':method': 'POST', ':path': '/orders', 'content-type': 'application/json' },
          );
          stream.on('error', () => undefined);
          stream.resume();
          // A gRPC prefix announcing 256 bytes (or the start of a JSON body), then a byte every 100 ms.
          stream.write(Buffer.from([0, 0, 0, 1, 0]));
          const drip = setInterval(() => stream.write(Buffer.from([0])), 100);
          return new Promise<number>((resolve) =>
            stream.once('close', () => {
              clearInterval(drip);
              resolve(stream.rstCode ?? -1);
            }),
          );
        }),
      );
      p.assert(
        codes.every((c) => c === h2.NGHTTP2_CANCEL),
        `trickling streams ended with ${[...new Set(codes)].join(', ')}, expected all reset with CANCEL (8)`,
      );
      // Then no stream, only PINGs: the session is closed anyway.
      // The session may already be gone (or be going) when the streams end: a PING on a destroyed
      // session throws, so the pinger only pings a live one and a gone session counts as closed.
      const closed = session.destroyed ? Promise.resolve() : new Promise((resolve) => session.once('close', resolve));
      const pinger = setInterval(() => {
        if (!session.destroyed && !session.closed) session.ping(() => undefined);
      }, 100);
      let giveUp: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        closed.then(() => 'closed'),
        new Promise((resolve) => (giveUp = setTimeout(() => resolve(`still open after ${HANG_GUARD_MS} ms (a hang)`), HANG_GUARD_MS))),
      ]);
      clearTimeout(giveUp);
      clearInterval(pinger);
      session.destroy();
      p.assert(outcome === 'closed', `a session sending only PINGs was ${String(outcome)}`);
    } finally {
      await front.shutdown();
    }
  }),
];
