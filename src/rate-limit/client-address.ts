/**
 * The client address a request is rate-limited on (rules LIMIT-rate-keying, LIMIT-rate-trust-proxy). Without
 * TRUST_PROXY it is the TCP peer and X-Forwarded-For is ignored. With it, the rightmost untrusted hop: from
 * the peer, while the current hop is a trusted proxy, step to the entry that proxy appended. Entries left of
 * the first untrusted hop were written by the client and never believed, so a client cannot pick its own
 * bucket; a malformed entry where a trusted proxy should have written an address ends the walk there.
 */
import { BlockList, isIP } from 'node:net';
import type { TrustedNetwork } from '../config/env.ts';

/** Beyond this many X-Forwarded-For hops the walk stops: a bound on work per request. */
const MAX_HOPS = 32;

export class ClientAddressResolver {
  readonly #trusted: BlockList | undefined;

  constructor(trusted: readonly TrustedNetwork[]) {
    if (trusted.length === 0) return;
    this.#trusted = new BlockList();
    for (const network of trusted) this.#trusted.addSubnet(network.address, network.prefix, network.family);
  }

  resolve(peer: string | undefined, forwardedFor: string | string[] | undefined): string {
    let current = normalise(peer);
    if (current === undefined) return 'unknown';
    const trusted = this.#trusted;
    if (trusted === undefined || forwardedFor === undefined) return current;
    // node:http joins repeated X-Forwarded-For fields with ", " in arrival order; a list is the same.
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
    for (let walked = 0; walked < MAX_HOPS && hops.length > 0; walked++) {
      if (!trusted.check(current, isIP(current) === 6 ? 'ipv6' : 'ipv4')) break;
      const next = normalise(hops.pop()!.trim());
      if (next === undefined) break;
      current = next;
    }
    return current;
  }
}

/** A bare IP address, IPv4-mapped IPv6 (`::ffff:10.0.0.1`) as the IPv4 address; anything else undefined. */
function normalise(address: string | undefined): string | undefined {
  if (address === undefined || address === '') return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const bare = mapped?.[1] ?? address;
  return isIP(bare) === 0 ? undefined : bare.toLowerCase();
}
