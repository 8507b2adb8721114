// ClientAddressResolver (rules LIMIT-rate-keying, LIMIT-rate-trust-proxy): which address a request is keyed on.
import { describe, expect, it } from 'vitest';
import { parseCidr } from '../config/env.ts';
import { ClientAddressResolver } from './client-address.ts';

function trusting(...cidrs: string[]): ClientAddressResolver {
  return new ClientAddressResolver(cidrs.map((text) => parseCidr(text) ?? expect.unreachable(text)));
}

const HOPS = Array.from({ length: 5_000 }, () => '10.0.0.1').join(', ');
const DISTINCT_HOPS = Array.from({ length: 40 }, (_, i) => `10.0.1.${i + 1}`).join(', ');

describe('ClientAddressResolver (rule LIMIT-rate-keying)', () => {
  it.each<[string, string[], string | undefined, string | string[] | undefined, string]>([
    // The header ignored without TRUST_PROXY, the address a trusted proxy appended, and entries the client
    // wrote never believed are the rate-limit-*-forwarded-for / trusted-proxy conformance cases.
    ['no TRUST_PROXY: a v4-mapped peer as v4', [], '::ffff:10.0.0.5', undefined, '10.0.0.5'],
    ['no TRUST_PROXY: no peer', [], undefined, '203.0.113.9', 'unknown'],
    // Only a whole ::ffff:a.b.c.d address is unmapped: multi-digit octets, nothing before or after it.
    ['no TRUST_PROXY: a v4-mapped peer with multi-digit octets as v4', [], '::FFFF:10.10.10.10', undefined, '10.10.10.10'],
    [
      'no TRUST_PROXY: a v6 peer merely ending in ::ffff:a.b.c.d stays v6',
      [],
      '2001:db8::ffff:10.0.0.5',
      undefined,
      '2001:db8::ffff:10.0.0.5',
    ],
    ['an untrusted peer is the client, whatever it forwards', ['10.0.0.0/8'], '198.51.100.7', '203.0.113.9', '198.51.100.7'],
    ['behind a trusted v4-mapped proxy, the same', ['10.0.0.0/8'], '::ffff:10.1.2.3', '203.0.113.9', '203.0.113.9'],
    // Rightmost untrusted hop.
    ['the walk passes two trusted proxies in a row', ['10.0.0.0/8'], '10.1.2.3', '1.1.1.1, 203.0.113.9, 10.9.9.9', '203.0.113.9'],
    // node:http joins repeated fields into one list, or they arrive as an array: same answer.
    ['repeated fields as an array', ['10.0.0.0/8'], '10.1.2.3', ['1.1.1.1', '203.0.113.9, 10.9.9.9'], '203.0.113.9'],
    ['every hop trusted: the leftmost address', ['10.0.0.0/8'], '10.1.2.3', '10.0.0.1, 10.0.0.2', '10.0.0.1'],
    // A trusted peer with no or a malformed entry keys on the last address the walk reached.
    ['a trusted peer without the header', ['10.0.0.0/8'], '10.1.2.3', undefined, '10.1.2.3'],
    ['a trusted peer with an empty header', ['10.0.0.0/8'], '10.1.2.3', '', '10.1.2.3'],
    ['a malformed rightmost entry', ['10.0.0.0/8'], '10.1.2.3', '203.0.113.9, not-an-ip', '10.1.2.3'],
    ['a v4-mapped entry with trailing garbage is malformed', ['10.0.0.0/8'], '10.1.2.3', '::ffff:203.0.113.9x', '10.1.2.3'],
    ['a malformed entry left of the client', ['10.0.0.0/8'], '10.1.2.3', 'unknown, 203.0.113.9', '203.0.113.9'],
    // IPv6 networks and addresses, normalised to lower case.
    ['a v6 loopback proxy', ['fd00::/8', '::1'], '::1', '2001:DB8::7', '2001:db8::7'],
    ['a v6 network of proxies', ['fd00::/8', '::1'], 'fd12::9', '2001:db8::7, fd00::1', '2001:db8::7'],
    ['an untrusted v6 peer', ['fd00::/8', '::1'], '2001:db8::1', '198.51.100.1', '2001:db8::1'],
    // The walk is bounded: a header of thousands of trusted hops costs at most 32 steps.
    ['5,000 trusted hops', ['10.0.0.0/8'], '10.1.2.3', `203.0.113.9, ${HOPS}`, '10.0.0.1'],
    // 40 distinct trusted hops 10.0.1.1 … 10.0.1.40: 32 steps from the right end the walk at 10.0.1.9.
    ['the walk stops after exactly 32 hops', ['10.0.0.0/8'], '10.1.2.3', DISTINCT_HOPS, '10.0.1.9'],
  ])('%s', (_label, cidrs, peer, forwardedFor, client) => {
    expect(trusting(...cidrs).resolve(peer, forwardedFor)).toBe(client);
  });
});
