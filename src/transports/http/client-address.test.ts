import { describe, expect, it } from 'vitest';
import { parseCidr } from '../../config/trust-proxy.ts';
import { ClientAddressResolver } from './client-address.ts';

function trusting(...cidrs: string[]): ClientAddressResolver {
  return new ClientAddressResolver(cidrs.map((text) => parseCidr(text) ?? expect.unreachable(text)));
}

describe('ClientAddressResolver (rule LIMIT-rate-keying)', () => {
  it('without TRUST_PROXY the key is the TCP peer and X-Forwarded-For is ignored', () => {
    const none = new ClientAddressResolver([]);
    expect(none.resolve('10.0.0.5', '203.0.113.9')).toBe('10.0.0.5');
    expect(none.resolve('::ffff:10.0.0.5', undefined)).toBe('10.0.0.5');
    expect(none.resolve(undefined, '203.0.113.9')).toBe('unknown');
  });

  it('an untrusted peer is the client, whatever it forwards', () => {
    expect(trusting('10.0.0.0/8').resolve('198.51.100.7', '203.0.113.9')).toBe('198.51.100.7');
  });

  it('behind a trusted proxy the client is the address that proxy appended', () => {
    expect(trusting('10.0.0.0/8').resolve('10.1.2.3', '203.0.113.9')).toBe('203.0.113.9');
    expect(trusting('10.0.0.0/8').resolve('::ffff:10.1.2.3', '203.0.113.9')).toBe('203.0.113.9');
  });

  it('rightmost untrusted hop: entries the client wrote itself (left of it) are never believed', () => {
    const resolver = trusting('10.0.0.0/8');
    // The client sent "X-Forwarded-For: 1.1.1.1"; the proxy appended the real address.
    expect(resolver.resolve('10.1.2.3', '1.1.1.1, 203.0.113.9')).toBe('203.0.113.9');
    // Two trusted proxies in a row: the walk passes both.
    expect(resolver.resolve('10.1.2.3', '1.1.1.1, 203.0.113.9, 10.9.9.9')).toBe('203.0.113.9');
    // Repeated fields arrive as one list (node:http joins them) or an array: same answer.
    expect(resolver.resolve('10.1.2.3', ['1.1.1.1', '203.0.113.9, 10.9.9.9'])).toBe('203.0.113.9');
  });

  it('every hop trusted: the leftmost address is the client', () => {
    expect(trusting('10.0.0.0/8').resolve('10.1.2.3', '10.0.0.1, 10.0.0.2')).toBe('10.0.0.1');
  });

  it('a trusted peer with no or a malformed entry keys on the last address the walk reached', () => {
    const resolver = trusting('10.0.0.0/8');
    expect(resolver.resolve('10.1.2.3', undefined)).toBe('10.1.2.3');
    expect(resolver.resolve('10.1.2.3', '')).toBe('10.1.2.3');
    expect(resolver.resolve('10.1.2.3', '203.0.113.9, not-an-ip')).toBe('10.1.2.3');
    expect(resolver.resolve('10.1.2.3', 'unknown, 203.0.113.9')).toBe('203.0.113.9');
  });

  it('IPv6 networks and addresses, normalised to lower case', () => {
    const resolver = trusting('fd00::/8', '::1');
    expect(resolver.resolve('::1', '2001:DB8::7')).toBe('2001:db8::7');
    expect(resolver.resolve('fd12::9', '2001:db8::7, fd00::1')).toBe('2001:db8::7');
    expect(resolver.resolve('2001:db8::1', '198.51.100.1')).toBe('2001:db8::1');
  });

  it('the walk is bounded: a header of thousands of trusted hops costs at most 32 steps', () => {
    const hops = Array.from({ length: 5_000 }, () => '10.0.0.1').join(', ');
    expect(trusting('10.0.0.0/8').resolve('10.1.2.3', `203.0.113.9, ${hops}`)).toBe('10.0.0.1');
  });
});
