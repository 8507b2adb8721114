import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/config/service-config.ts';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';

/**
 * Spec 4.4 rule 2 behind TLS (rule ONEPORT-tls): a certificate made for this test, ALPN h2 and http/1.1 on
 * one port. REST and gRPC (a 0 grpc-status) on one h2 connection are conformance/cases/one-port-attacks.ts (tls-alpn-…).
 */
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
