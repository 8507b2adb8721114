/**
 * The explorer's own copy of every number and message its oracle and its workload rely on, written
 * from the spec and the project's rules (spec/rules.yaml), never imported from the product: an oracle
 * that asks the product what to expect agrees with every bug in it. A product constant that drifts
 * from these shows as a violation, which is the point.
 */

/** The fleet's settings (spec 8.1 variables), small enough that a 200-step run reaches every bound. */
export const EXPLORE_ENV = {
  JWT_SECRET: 'explore-secret-explore-secret-explore-secret',
  JWT_EXPIRY: '1h',
  RATE_LIMIT_RPS: '5',
  SESSION_RECENT: '3',
} as const;
/**
 * Rule LIMIT-rate-trust-proxy: the fleet sits behind a balancer in 10.9.0.0/16 that appends the client's
 * address to X-Forwarded-For; clients also reach a replica directly. Two seeds in three trust it.
 */
export const TRUST_PROXY = '10.9.0.0/16';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Spec 8 "Token lifetime": JWT_EXPIRY above, 1h. */
export const TOKEN_LIFETIME_MS = 1 * HOUR;
/** Spec 8 "Rate limit": RATE_LIMIT_RPS above; the bucket holds as many (rule LIMIT-rate-keying). */
export const RATE_PER_SECOND = 5;
export const RATE_BURST = 5;
/** Spec 8 "Session list length": SESSION_RECENT above. */
export const SESSION_RECENT = 3;
/** Spec 3.2 / 8: the linger window after the last holder, and the live-instance cap. */
export const SESSION_LINGER_MS = 5 * MINUTE;
export const SESSION_CAP = 50_000;
/** Rule SVC-cache-ttl: an order stays five minutes in the shared cache. */
export const CACHE_TTL_MS = 5 * MINUTE;
/** Rule SVC-near-cache: the speed ring's near tier keeps an order 30 s. */
export const NEAR_CACHE_TTL_MS = 30 * SECOND;
/** Rule IDEM-expiry: a key answers retries 24 h from its first use. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * HOUR;
/** Spec 4.1 rule 6 / spec 8: list page size default and maximum; offsets below 0 fall back to 0. */
export const PAGE_LIMIT_DEFAULT = 20;
export const PAGE_LIMIT_MAX = 100;

/** Rule EVT-7-delivery: the relay's loop. */
export const RELAY = {
  pollMs: 50,
  backoffInitialMs: 100,
  backoffMaxMs: 2 * SECOND,
  jitter: 0.2,
  sampleMs: 1 * SECOND,
  unhealthyPending: 10_000,
  unhealthyAgeMs: 10 * SECOND,
  purgeEveryMs: 1 * MINUTE,
  flushTimeoutMs: 5 * SECOND,
} as const;

/**
 * Rule LOGIN-gate: derivations at once = cores - 1 (at least 1, at most 4), 2 waiting per client, 8 waiting
 * per running slot in all. The explorer's replicas get the limits of a 2- or a 4-core machine (drawn per
 * seed), whatever the host has, so a seed replays anywhere.
 */
export function loginGateLimits(cores: number): { concurrency: number; queuePerClient: number; queueTotal: number } {
  const concurrency = Math.max(1, Math.min(4, cores - 1));
  return { concurrency, queuePerClient: 2, queueTotal: 8 * concurrency };
}
/** What one password derivation costs on the simulated clock (bench/login-flood.ts: about 19 a second). */
export const DERIVATION_MS = 50;

/** Spec 7 and the rules' Error messages the explorer checks by text. */
export const MESSAGES = {
  missingCredentials: 'missing or malformed Authorization header',
  invalidToken: 'invalid or expired token',
  invalidCredentials: 'invalid credentials',
  keyReused: 'Idempotency-Key already used for a different request',
  invalidOrderId: 'invalid order id',
  notFound: 'not found',
  forbidden: 'forbidden',
} as const;
