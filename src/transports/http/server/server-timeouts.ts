/** Our choice for spec 8's "timeouts: not shown", for every HTTP server: against slow clients (slowloris) and idle sockets. */
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
