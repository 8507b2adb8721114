/**
 * The timeouts every public server declares against slow and idle clients (our choice for spec 8's
 * "timeouts: not shown"), and the shorter ones a test harness passes in composition to see Node enforce
 * them without waiting tens of seconds. No environment variable sets them.
 */
/** What a public server promises against slow and idle clients; every transport declares its own. */
export interface ServerTimeouts {
  /** A request's headers must arrive within this. */
  readonly headersMs: number;
  /** A whole request must arrive within this. */
  readonly requestMs: number;
  /** An idle connection is closed after this (the longest of the protocols the server speaks). */
  readonly idleMs: number;
}

/** For every HTTP/1.1 server: against slow clients (slowloris) and idle sockets. */
export const HTTP1_SERVER_TIMEOUTS: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, idleMs: 5_000 };

/** How often node:http sweeps for the two request timeouts: one fires at most this late (rule LIMIT-timeouts-enforced). */
export const TIMEOUT_CHECK_INTERVAL_MS = 250;

/**
 * Timeouts Node's servers enforce, not our Clock: HTTP/1.1's, the one-port listener's protocol sniff and its
 * HTTP/2 session deadlines. Undefined: the declared value; a test harness passes shorter ones in composition.
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

export function http1Timeouts(overrides: PlatformTimeouts = {}): ServerTimeouts {
  return {
    headersMs: overrides.headersMs ?? HTTP1_SERVER_TIMEOUTS.headersMs,
    requestMs: overrides.requestMs ?? HTTP1_SERVER_TIMEOUTS.requestMs,
    idleMs: overrides.keepAliveMs ?? HTTP1_SERVER_TIMEOUTS.idleMs,
  };
}
