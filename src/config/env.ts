/**
 * Helpers for per-component configuration (spec 8.1: each component reads its own variables).
 * Every failure names the variable and never echoes its value, since some values are secrets.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function requireVar(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new ConfigError(`config: missing required variable ${name}`);
  return value;
}

export function optionalVar(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

export function positiveIntVar(env: Env, name: string, fallback: number): number {
  const text = optionalVar(env, name, String(fallback));
  const value = Number(text);
  // Decimal digits only: Number() would also take `0x10`, `1e3`, ` 5` and `5.0`.
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigError(`config: ${name} must be a positive integer`);
  }
  return value;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go-style duration strings as the spec uses them: `30m`, `2h`, `1h30m`, `45s`, `500ms`. */
export function parseDuration(text: string): number | undefined {
  const match = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(text);
  if (!match) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * (UNIT_MS[unit as string] as number);
  }
  return total > 0 ? total : undefined;
}

export function durationVar(env: Env, name: string, fallback: string): number {
  const value = parseDuration(optionalVar(env, name, fallback));
  if (value === undefined) throw new ConfigError(`config: ${name} must be a duration such as 30m or 2h`);
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
  if (!match || port > 65_535) throw new ConfigError(`config: ${name} must be host:port or :port`);
  const host = match[1] ?? match[2];
  return { host: host === '' ? undefined : host, port };
}

export function addressVar(env: Env, name: string, fallback: string): ListenAddress {
  return parseListenAddress(name, optionalVar(env, name, fallback));
}
