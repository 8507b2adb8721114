import { once } from 'node:events';
import { connect, createServer, type Http2Server, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUnaryServer } from './unary-server.ts';

/**
 * The unary server on a plain node:http2 server (no one-port dispatcher in front, which routes only
 * requests with a gRPC Content-Type here): what it does with requests that lack the headers a gRPC
 * client always sends, and what its observer is told of them.
 */
let server: Http2Server;
let origin: string;
const observed: Array<[string, string | undefined, number | undefined]> = [];

beforeAll(async () => {
  const handler = createUnaryServer<undefined>({
    methods: new Map(),
    authenticate: () => undefined,
    toStatus: () => ({ code: 13, message: 'internal server error' }),
    observe: (path, kind) => {
      const entry: [string, string | undefined, number | undefined] = [path, kind, undefined];
      observed.push(entry);
      return { end: (code) => (entry[2] = code) };
    },
  });
  server = createServer(handler);
  // Node answers CONNECT (the one request without :path) 405 itself unless someone listens for it; the
  // one-port server does not, so only a server wired like this one hands the unary server such a request.
  server.on('connect', handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function call(headers: OutgoingHttpHeaders): Promise<IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    session.on('error', reject);
    const stream = session.request(headers);
    stream.on('error', () => undefined);
    let reply: IncomingHttpHeaders = {};
    stream.once('response', (h) => (reply = h));
    stream.resume();
    stream.once('close', () => {
      session.destroy();
      resolve(reply);
    });
    stream.end();
  });
}

describe('requests without the headers of a gRPC call', () => {
  it('no :path (CONNECT): UNIMPLEMENTED `unknown service or method`, observed as the empty path', async () => {
    observed.length = 0;
    const reply = await call({ ':method': 'CONNECT', ':authority': 'example:443', 'content-type': 'application/grpc' });
    expect([reply[':status'], reply['grpc-status'], reply['grpc-message']]).toEqual([200, '12', 'unknown service or method']);
    expect(observed).toEqual([['', undefined, 12]]);
  });

  it('no Content-Type (GRPC-content-type): HTTP 415, UNIMPLEMENTED `unsupported content type`', async () => {
    const reply = await call({ ':method': 'POST', ':path': '/t.T/M' });
    expect([reply[':status'], reply['grpc-status'], reply['grpc-message']]).toEqual([415, '12', 'unsupported content type']);
  });
});
