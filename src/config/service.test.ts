// loadServiceConfig (spec 8.1): each variable's accepted forms and refusals, JWT_SECRET, TLS files, TRUST_PROXY.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Env } from './env.ts';
import { ConfigError } from './env.ts';
import { loadServiceConfig } from './service.ts';

const SECRET = 'a-test-signing-secret-of-at-least-32-bytes';

function load(env: Env, embedded = false) {
  return loadServiceConfig({ JWT_SECRET: SECRET, ...env }, { embedded });
}

/** Expects a ConfigError naming `variable` whose text contains none of the env's values. */
function expectConfigError(env: Env, variable: string, embedded = false): string {
  let failure: unknown;
  try {
    loadServiceConfig(env, { embedded });
  } catch (error) {
    failure = error;
  }
  expect(failure).toBeInstanceOf(ConfigError);
  const message = (failure as Error).message;
  expect(message).toContain(variable);
  for (const value of Object.values(env)) if (value !== undefined && value.length >= 3) expect(message).not.toContain(value);
  return message;
}

describe('loadServiceConfig (spec 8.1)', () => {
  // The defaults, and empty values meaning them, are the tagged CONFIG-defaults case in rules.test.ts;
  // LOG_LEVEL's values are the tagged LOG-level case in observability-rules.test.ts.

  // Each variable is read with its own parser (env.test.ts covers the parsers in depth): one accepted
  // value per form, and every bad value refused naming the variable without echoing the value.
  it.each([
    ['JWT_EXPIRY', { '30m': 1_800_000, '2h': 7_200_000 }, (c) => c.tokens.expiryMs, ['90', 'one-hour', '-1h', '0h', '1d', '1h 30m']],
    ['RATE_LIMIT_RPS', { '1': 1 }, (c) => c.rateLimitRps, ['0', '-3', '2.5', 'many', '0x10', '1e3']],
    ['SESSION_RECENT', { '1': 1 }, (c) => c.sessionRecent, ['0', '-3', '2.5', 'many', '0x10', '1e3']],
    [
      'HTTP_ADDR',
      { ':8080': { host: undefined, port: 8080 } },
      (c) => c.httpAddr,
      ['8080', 'localhost', ':70000', '::1:9000', 'http://localhost:8080'],
    ],
    // ADMIN_ADDR binds loopback unless configured; `:8081` asks for every interface (LIMIT-listen-defaults).
    [
      'ADMIN_ADDR',
      { ':8081': { host: undefined, port: 8081 }, '127.0.0.1:0': { host: '127.0.0.1', port: 0 } },
      (c) => c.adminAddr,
      ['8080', 'localhost', ':70000', '::1:9000', 'http://localhost:8080'],
    ],
    [
      'OTLP_ENDPOINT',
      { '127.0.0.1:4318': '127.0.0.1:4318' },
      (c) => c.otlpEndpoint,
      ['http://collector:4318', 'https://collector:4318', 'grpc://collector:4317'],
    ],
  ] satisfies [string, Record<string, unknown>, (config: ReturnType<typeof load>) => unknown, string[]][])(
    '%s: accepted forms, and bad values refused naming it',
    (name, accepted, read, bad) => {
      for (const [text, value] of Object.entries(accepted)) expect(read(load({ [name]: text }))).toEqual(value);
      for (const text of bad) expectConfigError({ JWT_SECRET: SECRET, [name]: text }, name);
    },
  );

  it('[LOG-level] LOG_LEVEL reaches the configuration: debug, warn and error select that level, anything else is info', () => {
    for (const level of ['debug', 'warn', 'error', 'info'] as const) expect(load({ LOG_LEVEL: level }).logLevel).toBe(level);
    for (const other of ['DEBUG', 'verbose', ' warn']) expect(load({ LOG_LEVEL: other }).logLevel).toBe('info');
  });

  // Missing or empty (it has deliberately no default): the tagged CONFIG-required case in rules.test.ts.
  describe('JWT_SECRET', () => {
    it('shorter than 32 bytes fails naming JWT_SECRET without echoing it', () => {
      expectConfigError({ JWT_SECRET: 'too-short-secret' }, 'JWT_SECRET');
      expectConfigError({ JWT_SECRET: 'x'.repeat(31) }, 'JWT_SECRET');
      // Bytes, not characters: 11 three-byte characters are 33 bytes.
      expect(load({ JWT_SECRET: '€'.repeat(11) }).tokens.secret).toBe('€'.repeat(11));
      expect(load({ JWT_SECRET: 'x'.repeat(32) }).tokens.secret).toBe('x'.repeat(32));
    });

    it('embedded mode generates a random one when unset, different each time', () => {
      const first = loadServiceConfig({}, { embedded: true });
      const second = loadServiceConfig({ JWT_SECRET: '' }, { embedded: true });
      expect(first.tokens.generated).toBe(true);
      expect(Buffer.byteLength(first.tokens.secret)).toBeGreaterThanOrEqual(32);
      expect(second.tokens.secret).not.toBe(first.tokens.secret);
    });

    it('embedded mode uses a given secret, and still checks it', () => {
      const config = loadServiceConfig({ JWT_SECRET: SECRET }, { embedded: true });
      expect(config.tokens).toEqual({ secret: SECRET, expiryMs: 3_600_000, generated: false });
      expectConfigError({ JWT_SECRET: 'short-in-embedded' }, 'JWT_SECRET', true);
    });
  });

  describe('RATE_LIMIT_STORE (rule LIMIT-rate-store)', () => {
    it('takes exactly memory or redis', () => {
      expect(load({ RATE_LIMIT_STORE: 'memory' }).rateLimitStore).toBe('memory');
      expect(load({ RATE_LIMIT_STORE: 'redis' }).rateLimitStore).toBe('redis');
      for (const value of ['Redis', 'REDIS', 'mem', 'redis ', 'valkey', 'none']) {
        // The message names the allowed values (which contain the rejected ones' letters), never the value.
        expect(() => load({ RATE_LIMIT_STORE: value })).toThrow(new ConfigError('RATE_LIMIT_STORE must be one of memory, redis'));
      }
    });

    it('redis with --embedded fails: there is no Redis to share a budget through', () => {
      expect(() => load({ RATE_LIMIT_STORE: 'redis' }, true)).toThrow(
        new ConfigError('RATE_LIMIT_STORE=redis needs real backends (REDIS_ADDR), not --embedded'),
      );
      expect(load({ RATE_LIMIT_STORE: 'memory' }, true).rateLimitStore).toBe('memory');
    });
  });

  it('TLS_CERT_FILE without TLS_KEY_FILE, or an unreadable file, fails naming the variable (rule ONEPORT-tls)', () => {
    expect(() => load({ TLS_CERT_FILE: '/tmp/cert.pem' }, true)).toThrow('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
    expect(() => load({ TLS_CERT_FILE: '/nonexistent/missing.pem', TLS_KEY_FILE: '/nonexistent/key.pem' }, true)).toThrow(
      /TLS_CERT_FILE: cannot read .*missing\.pem \(ENOENT\)/,
    );
  });

  it('TLS_KEY_FILE without TLS_CERT_FILE fails alike, and an unreadable key file names TLS_KEY_FILE (rule ONEPORT-tls)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'orders-tls-'));
    try {
      const cert = join(dir, 'cert.pem');
      writeFileSync(cert, 'not really a certificate');
      expect(() => load({ TLS_KEY_FILE: cert }, true)).toThrow(new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together'));
      expect(() => load({ TLS_CERT_FILE: cert }, true)).toThrow(new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together'));
      const key = join(dir, 'missing-key.pem');
      expect(() => load({ TLS_CERT_FILE: cert, TLS_KEY_FILE: key }, true)).toThrow(
        new ConfigError(`TLS_KEY_FILE: cannot read ${key} (ENOENT)`),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('TRUST_PROXY (rule LIMIT-rate-keying)', () => {
    it('reads addresses and CIDRs of both families, spaces around commas allowed', () => {
      expect(load({ TRUST_PROXY: ' 127.0.0.1 , ::1, 172.16.0.0/12,2001:db8::/32' }).trustProxy).toEqual([
        { address: '127.0.0.1', prefix: 32, family: 'ipv4' },
        { address: '::1', prefix: 128, family: 'ipv6' },
        { address: '172.16.0.0', prefix: 12, family: 'ipv4' },
        { address: '2001:db8::', prefix: 32, family: 'ipv6' },
      ]);
      expect(load({ TRUST_PROXY: '0.0.0.0/0' }).trustProxy).toEqual([{ address: '0.0.0.0', prefix: 0, family: 'ipv4' }]);
    });

    it('[LIMIT-rate-trust-proxy] blanks alone are empty: no proxy is trusted', () => {
      for (const value of [' ', '  \t ']) expect(load({ TRUST_PROXY: value }).trustProxy).toEqual([]);
    });

    it('an invalid entry fails naming TRUST_PROXY and the entry number, not the value', () => {
      // The whole entry must be the address: none taken from its end ('1.2.3.4/5/10.0.0.0/8', '1.2.3.4 10.0.0.1').
      for (const value of [
        '10.0.0.0/33',
        '::/129',
        'proxy.internal',
        '10.0.0.0/8,',
        '10.0.0/8',
        '10.0.0.0/-1',
        '10.0.0.0/ 8',
        '*',
        '1.2.3.4/5/10.0.0.0/8',
        '1.2.3.4 10.0.0.1',
      ]) {
        expect(expectConfigError({ JWT_SECRET: SECRET, TRUST_PROXY: value }, 'TRUST_PROXY')).toMatch(
          /^config: TRUST_PROXY entry \d+ must be an IP address or CIDR/,
        );
      }
    });
  });
});
