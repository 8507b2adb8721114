/**
 * Parsers of configuration variables (spec 8.1: each component reads its own variables, rule
 * CONFIG-own-vars). Every failure is a ConfigError naming the variable, never echoing its value, since some
 * values are secrets (rules CONFIG-formats, CONFIG-no-secret-echo); readAll gathers every failure of a whole
 * configuration into one (rule CONFIG-all-at-once).
 */
import { isIP } from 'node:net';

export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  /** Each invalid variable's problem; `missing` are the required variables unset or empty. */
  readonly problems: readonly string[];
  readonly missing: readonly string[];
  constructor(problems: string | readonly string[], missing: readonly string[] = []) {
    const list = typeof problems === 'string' ? [problems] : problems;
    const absent = missing.length === 0 ? [] : [`missing required variable${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`];
    super(`config: ${[...absent, ...list].join('; ')}`);
    this.name = 'ConfigError';
    this.problems = list;
    this.missing = missing;
  }
}

/**
 * Calls every reader, even after one failed, and throws their ConfigErrors as one: a person fixing the
 * environment sees all that is missing or invalid in one run, not one variable per attempt (rule
 * CONFIG-all-at-once). Any other error is a fault and passes through at once.
 */
export function readAll<T extends object>(readers: { readonly [K in keyof T]-?: () => T[K] }): T {
  const values: Partial<T> = {};
  const problems: string[] = [];
  const missing: string[] = [];
  for (const key of Object.keys(readers) as (keyof T)[]) {
    try {
      values[key] = readers[key]();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      missing.push(...error.missing);
    }
  }
  if (problems.length > 0 || missing.length > 0) throw new ConfigError(problems, missing);
  return values as T;
}

export function requireVar(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new ConfigError([], [name]);
  return value;
}

/** Unset and empty both mean the default (rule CONFIG-defaults). */
export function optionalVar(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

export function positiveIntVar(env: Env, name: string, fallback: number): number {
  const text = optionalVar(env, name, String(fallback));
  const value = Number(text);
  // Decimal digits only: Number() would also take `0x10`, `1e3`, ` 5` and `5.0`.
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigError(`${name} must be a positive integer`);
  }
  return value;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go-style duration strings as the spec uses them: `30m`, `2h`, `1h30m`, `45s`, `500ms`. */
export function parseDuration(text: string): number | undefined {
  if (!/^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(amount) * UNIT_MS[unit!]!;
  return total > 0 ? total : undefined;
}

export function durationVar(env: Env, name: string, fallback: string): number {
  const value = parseDuration(optionalVar(env, name, fallback));
  if (value === undefined) throw new ConfigError(`${name} must be a duration such as 30m or 2h`);
  return value;
}

export interface ListenAddress {
  /** undefined = every interface, as Go's `:8080` means. */
  readonly host: string | undefined;
  readonly port: number;
}

/** `host:port`, `:port` or `[v6]:port`; port 0 asks the OS for a free one (tests). */
export function parseListenAddress(name: string, text: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65_535) throw new ConfigError(`${name} must be host:port or :port`);
  const host = match[1] ?? match[2];
  return { host: host === '' ? undefined : host, port };
}

export function addressVar(env: Env, name: string, fallback: string): ListenAddress {
  return parseListenAddress(name, optionalVar(env, name, fallback));
}

/** One entry of TRUST_PROXY: a network in CIDR form (a bare address is a /32 or /128). */
export interface TrustedNetwork {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/**
 * TRUST_PROXY: comma-separated CIDRs (`10.0.0.0/8, 192.168.1.7, fd00::/8`) of the proxies allowed to name
 * the client in X-Forwarded-For (rule LIMIT-rate-trust-proxy). Empty (the default) trusts no one.
 */
export function trustProxyVar(env: Env): readonly TrustedNetwork[] {
  const text = optionalVar(env, 'TRUST_PROXY', '').trim();
  if (text === '') return [];
  return text.split(',').map((entry, index) => {
    const network = parseCidr(entry.trim());
    if (network === undefined) throw new ConfigError(`TRUST_PROXY entry ${index + 1} must be an IP address or CIDR such as 10.0.0.0/8`);
    return network;
  });
}

export function parseCidr(text: string): TrustedNetwork | undefined {
  const [, address = '', bits] = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(text) ?? [];
  const version = isIP(address);
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (version === 0 || prefix > max) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}
