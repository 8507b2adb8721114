import { BlockList, isIP } from 'node:net';
import type { TrustedNetwork } from '../config/trust-proxy.ts';

/** Beyond this many X-Forwarded-For hops the walk stops: a bound on work per request. */
const MAX_HOPS = 32;

/**
 * The client address a request is keyed on (rule LIMIT-rate-keying). Without trusted proxies it is the
 * TCP peer and X-Forwarded-For is ignored. With TRUST_PROXY it is the rightmost untrusted hop: start at
 * the peer and, while the current hop is a trusted proxy, step to the entry that proxy appended (the
 * next one from the right of X-Forwarded-For). Entries left of the first untrusted hop were written by
 * the client and are never believed, so a client cannot pick its own bucket. A malformed entry where a
 * trusted proxy should have written an address ends the walk at that proxy.
 */
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
    if (this.#trusted === undefined || forwardedFor === undefined) return current;
    // node:http joins repeated X-Forwarded-For fields with ", " in arrival order; a list is the same.
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
    for (let walked = 0; walked < MAX_HOPS && hops.length > 0 && this.#isTrusted(current); walked++) {
      const next = normalise((hops.pop() as string).trim());
      if (next === undefined) break;
      current = next;
    }
    return current;
  }

  #isTrusted(address: string): boolean {
    return (this.#trusted as BlockList).check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
}

/** A bare IP address, IPv4-mapped IPv6 (`::ffff:10.0.0.1`) as the IPv4 address; anything else undefined. */
function normalise(address: string | undefined): string | undefined {
  if (address === undefined || address === '') return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const bare = mapped?.[1] ?? address;
  return isIP(bare) === 0 ? undefined : bare.toLowerCase();
}
