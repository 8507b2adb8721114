import { connect, constants as h2 } from 'node:http2';
import { describe, expect, it } from 'vitest';
import { HTTP2_MAX_CONCURRENT_STREAMS, HTTP2_STREAM_REQUEST_TIMEOUT_MS } from '../../packages/one-port-grpc/index.ts';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { startInProcess } from '../support/in-process-app.ts';
import { grpcDriver } from '../../conformance/drivers/grpc.ts';

/**
 * The trickle attack against orders-grpc with its real deadline: every stream slot of one h2c session
 * (HTTP2_MAX_CONCURRENT_STREAMS) sending 64 bytes every 5 s. Every one is reset (CANCEL), none before the declared deadline
 * (a lower bound only: a busy machine can only make it later), and the port still answers.
 */
describe('HTTP/2 stream request deadline, waited out (rule H2-stream-deadline)', () => {
  it(
    `${HTTP2_MAX_CONCURRENT_STREAMS} trickling streams are all reset at the ${HTTP2_STREAM_REQUEST_TIMEOUT_MS / 1000} s deadline`,
    { timeout: HTTP2_STREAM_REQUEST_TIMEOUT_MS + 30_000 },
    async () => {
      const app = await startInProcess({ transport: grpcTransport });
      const client = grpcDriver({ baseUrl: app.baseUrl, adminUrl: undefined, hooks: undefined });
      try {
        const token = await app.login('alice');
        const session = connect(app.baseUrl);
        session.on('error', () => undefined);
        // Opened after the server's SETTINGS: more streams than it allows, sent before, would be refused.
        await new Promise((resolve) => session.once('remoteSettings', resolve));
        const opened = Date.now();
        const outcomes = await Promise.all(
          Array.from({ length: HTTP2_MAX_CONCURRENT_STREAMS }, (_, i) => {
            const grpc = i % 2 === 0;
            const stream = session.request(
              grpc
                ? {
                    ':method': 'POST',
                    ':path': '/ordersv1.Orders/CreateOrder',
                    'content-type': 'application/grpc',
                    te: 'trailers',
                    authorization: `Bearer ${token}`,
                  }
                : { ':method': 'POST', ':path': '/orders', 'content-type': 'application/json', authorization: `Bearer ${token}` },
            );
            stream.on('error', () => undefined);
            stream.resume();
            stream.write(grpc ? Buffer.from([0, 0, 0, 4, 0]) : Buffer.from('{"item":"'));
            const drip = setInterval(() => stream.write(Buffer.alloc(64, 0x61)), 5_000);
            return new Promise<{ code: number | undefined; afterMs: number }>((resolve) =>
              stream.once('close', () => {
                clearInterval(drip);
                resolve({ code: stream.rstCode, afterMs: Date.now() - opened });
              }),
            );
          }),
        );
        session.destroy();
        expect(new Set(outcomes.map((o) => o.code))).toEqual(new Set([h2.NGHTTP2_CANCEL]));
        expect(Math.min(...outcomes.map((o) => o.afterMs))).toBeGreaterThanOrEqual(HTTP2_STREAM_REQUEST_TIMEOUT_MS - 50);
        expect((await client.recent(`Bearer ${token}`)).codeName).toBe('OK');
        expect((await fetch(`${app.baseUrl}/me/recent`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      } finally {
        await client.close();
        await app.stop();
      }
    },
  );
});
