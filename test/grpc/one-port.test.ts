import { connect as netConnect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { isGrpcRequest } from '../../src/transports/grpc/one-port-server.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { encodeRequest } from '../../conformance/drivers/grpc.ts';
import { grpcFrame, rawGrpc } from './raw-grpc.ts';

const LOGIN_ALICE = encodeRequest('Login', { username: 'alice', password: 'alice-password' });

describe('isGrpcRequest: spec 4.4 rule 1 taken literally', () => {
  it.each([
    [2, 'application/grpc', true],
    [2, 'application/grpc+proto', true],
    [2, 'application/grpc; charset=utf-8', true],
    [2, 'application/grpc-web', true],
    [2, 'application/grpc-web-text', true],
    [2, 'application/grpcfoo', true],
    [1, 'application/grpc', false],
    [1, 'application/grpc+proto', false],
    [2, 'application/json', false],
    [2, undefined, false],
    [2, '', false],
    [2, 'Application/grpc', false],
    [2, ' application/grpc', false],
  ] as const)('HTTP/%i with %o → gRPC: %s', (major, contentType, expected) => {
    expect(isGrpcRequest(major, contentType)).toBe(expected);
  });
});

// Edge cases of the one-port sniffing that the conformance one-port cases do not send (spec 4.4 rules 1-3); a REST
// path with application/grpc over HTTP/2 going to gRPC, unseen by REST, is http2-with-grpc-content-type-goes-to-grpc
// and grpc-not-observed-by-http-middleware.
describe('one port: edge cases of spec 4.4 rule 1', () => {
  let app: InProcessApp;

  beforeAll(async () => {
    app = await startInProcess({ transport: grpcTransport, serviceName: 'orders-grpc' });
    await app.addUser('alice');
  });

  afterAll(async () => {
    await app?.stop();
  });

  const restLines = (): number => app.logs.find('request').length;

  it('HTTP/2 with Application/gRPC (other case) is not gRPC by the literal rule: REST answers', async () => {
    const res = await rawGrpc(app.baseUrl, '/ordersv1.Orders/Login', grpcFrame(LOGIN_ALICE), { 'content-type': 'Application/gRPC', te: undefined });
    expect(res.httpStatus).toBe(404);
    expect(JSON.parse(res.body.toString())).toEqual({ error: 'not found' });
  });

  it('HTTP/2 + application/grpc-web goes to the gRPC side, which serves gRPC only: 415, REST never sees it', async () => {
    const before = restLines();
    for (const contentType of ['application/grpc-web+proto', 'application/grpc-web-text', 'application/grpcfoo']) {
      const res = await rawGrpc(app.baseUrl, '/ordersv1.Orders/Login', grpcFrame(LOGIN_ALICE), { 'content-type': contentType, te: undefined });
      expect(res.httpStatus, contentType).toBe(415);
      expect(res.headers['x-ratelimit-limit'], contentType).toBeUndefined();
      expect(res.headers['ratelimit-limit'], contentType).toBeUndefined();
    }
    expect(restLines()).toBe(before);
  });

  it('HTTP/1.1 sent one byte at a time, starting like the HTTP/2 preface (P…), still reaches REST', async () => {
    const body = JSON.stringify({ username: 'alice', password: 'wrong' });
    const request = `POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
    const socket = netConnect(app.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    for (let i = 0; i < 8; i++) {
      socket.write(request[i]!);
      await sleep(5);
    }
    socket.write(request.slice(8));
    await closed;
    const response = Buffer.concat(chunks).toString();
    expect(response).toMatch(/^HTTP\/1\.1 401 /);
    expect(response).toContain('{"error":"invalid credentials"}');
  });
});
