import { isIP } from 'node:net';
import { ConfigError, optionalVar, type Env } from './env.ts';

/** One entry of TRUST_PROXY: a network in CIDR form (a bare address is a /32 or /128). */
export interface TrustedNetwork {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/**
 * TRUST_PROXY: comma-separated CIDRs (`10.0.0.0/8, 192.168.1.7, fd00::/8`) of the proxies allowed to
 * name the client in X-Forwarded-For (rule LIMIT-rate-keying). Empty (the default) trusts no one: the
 * rate limiter keys on the TCP peer. The value is not echoed on error, like every variable.
 */
export function trustProxyVar(env: Env, name = 'TRUST_PROXY'): readonly TrustedNetwork[] {
  const text = optionalVar(env, name, '').trim();
  if (text === '') return [];
  return text.split(',').map((entry, index) => parseCidr(entry.trim()) ?? invalidEntry(name, index));
}

export function parseCidr(text: string): TrustedNetwork | undefined {
  const match = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(text);
  if (match === null) return undefined;
  const address = match[1] as string;
  const version = isIP(address);
  if (version === 0) return undefined;
  const bits = version === 4 ? 32 : 128;
  const prefix = match[2] === undefined ? bits : Number(match[2]);
  if (prefix > bits) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function invalidEntry(name: string, index: number): never {
  throw new ConfigError(`config: ${name} entry ${index + 1} must be an IP address or CIDR such as 10.0.0.0/8`);
}
