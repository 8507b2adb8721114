/** Our choice for spec 8's "timeouts: not shown", for every HTTP server: against slow clients (slowloris) and idle sockets. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
