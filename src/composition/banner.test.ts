// The terminal banner's addresses: what a browser can open for each listener, and no console or logins without --embedded.
import { describe, expect, it } from 'vitest';
import { startBanner } from './banner.ts';

const base = { serviceName: 'orders-stdlib', secure: false, embedded: false, logins: [] };

describe('startBanner', () => {
  it('real backends: the API, its docs and the admin listener; no console, no logins', () => {
    expect(startBanner({ ...base, api: { host: undefined, port: 8080 }, admin: { host: '127.0.0.1', port: 8081 } })).toBe(
      [
        '',
        'orders-stdlib is running; Ctrl-C stops it.',
        '  API       http://localhost:8080',
        '  API docs  http://localhost:8080/swagger/',
        '  admin     http://127.0.0.1:8081/healthz  http://127.0.0.1:8081/metrics',
        '',
        '',
      ].join('\n'),
    );
  });

  it('every interface reads as localhost, an IPv6 address is bracketed, TLS is https (the API only)', () => {
    const text = startBanner({ ...base, secure: true, api: { host: '::', port: 443 }, admin: { host: '::1', port: 9 } });
    expect(text).toContain('  API       https://localhost:443\n');
    expect(text).toContain('  admin     http://[::1]:9/healthz');
    expect(startBanner({ ...base, api: { host: '0.0.0.0', port: 1 }, admin: { host: 'ops.internal', port: 2 } })).toContain(
      'http://ops.internal:2/metrics',
    );
  });
});
