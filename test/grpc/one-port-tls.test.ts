import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { connect as h2connect } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/config/service-config.ts';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { OrdersTestClient } from './grpc-test-client.ts';
import { grpcFrame } from './raw-grpc.ts';

/** Spec 4.4 rule 2 behind TLS (rule ONEPORT-tls): a certificate made for this test, ALPN h2 and http/1.1 on one port. */
describe('orders-grpc behind TLS: both protocols, chosen per connection by ALPN (issue 18 item 6)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orders-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  let ca: Buffer;
  let app: InProcessApp;
  let port: number;

  beforeAll(async () => {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
    ca = readFileSync(certFile);
    app = await startInProcess({ transport: grpcTransport, env: { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } });
    await app.addUser('alice');
    port = app.port;
  });
  afterAll(async () => {
    await app?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('HTTPS with ALPN http/1.1 reaches REST', async () => {
    const reply = await new Promise<{ status: number; alpn: string | false | null; body: string }>((resolve, reject) => {
      const options = { host: '127.0.0.1', port, path: '/openapi.yaml', ca, ALPNProtocols: ['http/1.1'] };
      const req = httpsRequest(options as RequestOptions, (res) => {
        const alpn = (res.socket as TLSSocket).alpnProtocol;
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, alpn, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(reply.status).toBe(200);
    expect(reply.alpn).toBe('http/1.1');
    expect(reply.body).toMatch(/^openapi: /m);
  });

  it('h2 over TLS carries REST and gRPC on the same connection, dispatched per request', async () => {
    const session = h2connect(`https://127.0.0.1:${port}`, { ca });
    try {
      await new Promise((resolve, reject) => (session.once('connect', resolve), session.once('error', reject)));
      expect(session.alpnProtocol).toBe('h2');
      const exchange = (headers: Record<string, string>, body?: Buffer): Promise<{ headers: Record<string, unknown>; trailers: Record<string, unknown>; body: Buffer }> =>
        new Promise((resolve, reject) => {
          const stream = session.request(headers);
          let h: Record<string, unknown> = {};
          let t: Record<string, unknown> = {};
          const chunks: Buffer[] = [];
          stream.once('response', (x) => (h = x));
          stream.once('trailers', (x) => (t = x));
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.once('error', reject);
          stream.once('end', () => resolve({ headers: h, trailers: t, body: Buffer.concat(chunks) }));
          stream.end(body);
        });
      const rest = await exchange({ ':method': 'GET', ':path': '/openapi.yaml' });
      expect(rest.headers[':status']).toBe(200);
      expect(rest.body.toString()).toMatch(/^openapi: /m);
      const rpc = await exchange({ ':method': 'POST', ':path': '/grpc.health.v1.Health/Check', 'content-type': 'application/grpc', te: 'trailers' }, grpcFrame(new Uint8Array()));
      expect(rpc.trailers['grpc-status']).toBe('0');
      expect([...rpc.body.subarray(5)]).toEqual([0x08, 0x01]); // SERVING
    } finally {
      session.close();
    }
  });

  it('@grpc/grpc-js with TLS credentials: Login and a protected call', async () => {
    const client = new OrdersTestClient(`127.0.0.1:${port}`, grpc.credentials.createSsl(ca));
    try {
      const token = await client.login('alice', 'alice-password');
      expect(await client.ok('Recent', {}, { token })).toEqual({ recent: [] });
    } finally {
      client.close();
    }
  });

  it('cleartext on the TLS port is not served', async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = netConnect(port, '127.0.0.1', () => socket.write('GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n'));
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('error', () => undefined);
      socket.once('close', () => resolve(text));
    });
    expect(answer).not.toContain('openapi');
  });

  it('TLS_CERT_FILE without TLS_KEY_FILE, or an unreadable file, stops start-up naming the variable', () => {
    expect(() => loadServiceConfig({ TLS_CERT_FILE: certFile }, { embedded: true })).toThrow('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
    expect(() => loadServiceConfig({ TLS_CERT_FILE: join(dir, 'missing.pem'), TLS_KEY_FILE: keyFile }, { embedded: true })).toThrow(/TLS_CERT_FILE: cannot read .*missing\.pem \(ENOENT\)/);
  });
});
