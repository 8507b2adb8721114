/**
 * The timeouts every public server declares against slow and idle clients (our choice for spec 8's
 * "timeouts: not shown"), and the shorter ones a test harness may pass in composition to see Node enforce
 * them without waiting tens of seconds. No environment variable sets them.
 */
/** For every HTTP server: against slow clients (slowloris) and idle sockets. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/**
 * How often node:http sweeps its connections for the two timeouts above (its default is 30 s, which
 * made a 10 s header timeout fire at 19-40 s): a timeout fires at most this late (rule LIMIT-timeouts-enforced).
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 250;

/** What a public server promises against slow and idle clients; every transport declares its own. */
export interface ServerTimeouts {
  /** A request's headers must arrive within this. */
  readonly headersMs: number;
  /** A whole request must arrive within this. */
  readonly requestMs: number;
  /** An idle connection is closed after this (the longest of the protocols the server speaks). */
  readonly idleMs: number;
}

export const HTTP1_SERVER_TIMEOUTS: ServerTimeouts = {
  headersMs: HEADERS_TIMEOUT_MS,
  requestMs: REQUEST_TIMEOUT_MS,
  idleMs: KEEP_ALIVE_TIMEOUT_MS,
};

/**
 * Timeouts that Node's servers enforce, not our Clock: HTTP/1.1 headersTimeout, requestTimeout and
 * keepAliveTimeout, the one-port listener's protocol sniff and its HTTP/2 session deadlines. Production
 * uses the declared constants (above, grpc/http2-limits.ts); a test harness passes shorter
 * ones in composition (AppOptions.platformTimeouts).
 */
export interface PlatformTimeouts {
  readonly headersMs?: number;
  readonly requestMs?: number;
  /** HTTP/1.1 keep-alive: an idle connection is closed after this. */
  readonly keepAliveMs?: number;
  /** One-port listener: a connection that has not shown its protocol by then is dropped. */
  readonly sniffMs?: number;
  /** One-port listener: an HTTP/2 session with no open stream is closed after this. */
  readonly http2IdleMs?: number;
  /** One-port listener: an HTTP/2 stream's request must have ended by then. */
  readonly http2StreamRequestMs?: number;
}

/** The HTTP/1.1 timeouts a server gets: the declared ones unless a test asked for others. */
export function http1Timeouts(overrides: PlatformTimeouts = {}): ServerTimeouts {
  return {
    headersMs: overrides.headersMs ?? HTTP1_SERVER_TIMEOUTS.headersMs,
    requestMs: overrides.requestMs ?? HTTP1_SERVER_TIMEOUTS.requestMs,
    idleMs: overrides.keepAliveMs ?? HTTP1_SERVER_TIMEOUTS.idleMs,
  };
}
