// What a fleet is made of before it runs: users' cheap hashes, legacy users, the configuration
// and client addresses. Cached once per process, so many seeds share them.
import { loadServiceConfig, type ServiceConfig } from '../src/config/service.ts';
import { hashPassword } from '../src/service/password-hasher.ts';
import { EXPLORE_ENV, TRUST_PROXY } from './spec-constants.ts';

const PASSWORD_COST = { N: 16, r: 1, p: 1 } as const;
const hashes = new Map<string, Promise<string>>();
/** Users' hashes at a tiny scrypt cost, made once per process (verifyPassword reads the cost from the hash). */
export function cheapHash(password: string): Promise<string> {
  let hash = hashes.get(password);
  if (hash === undefined) {
    hash = hashPassword(password, PASSWORD_COST);
    hashes.set(password, hash);
  }
  return hash;
}
/** A user migrated from an old system whose stored hash this service cannot read: its logins fail, never crash. */
export const LEGACY_PASSWORD = 'legacy-password';
export const LEGACY = [
  { username: 'legacy-md5', hash: 'md5$5f4dcc3b5aa765d61d8327deb882cf99' },
  { username: 'legacy-short', hash: 'scrypt$16$1$1$c2FsdHNhbHRzYWx0$c2hvcnQ' },
  // A cost scrypt refuses (N not a power of two): still a hash that does not match.
  { username: 'legacy-cost', hash: `scrypt$3$1$1$c2FsdHNhbHRzYWx0$${Buffer.alloc(32, 7).toString('base64url')}` },
] as const;

const configs = new Map<boolean, ServiceConfig>();
/** The fleet's configuration: with or without TRUST_PROXY (loaded once per process each). */
export function exploreConfig(trustProxy: boolean): ServiceConfig {
  let config = configs.get(trustProxy);
  if (config === undefined) {
    config = loadServiceConfig({ ...EXPLORE_ENV, ...(trustProxy ? { TRUST_PROXY } : {}) }, { embedded: true });
    configs.set(trustProxy, config);
  }
  return config;
}

/** Client addresses: IPv4, IPv4-mapped IPv6 (keyed as IPv4) and IPv6 (keyed in lower case). */
export function addressOf(user: number): { address: string; limitKey: string } {
  if (user % 3 === 1) return { address: `::ffff:10.0.0.${user + 1}`, limitKey: `10.0.0.${user + 1}` };
  if (user % 3 === 2) return { address: `2001:DB8::${user + 1}`, limitKey: `2001:db8::${user + 1}` };
  return { address: `10.0.0.${user + 1}`, limitKey: `10.0.0.${user + 1}` };
}
