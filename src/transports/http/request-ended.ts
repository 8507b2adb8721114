/**
 * The reason every HTTP transport aborts a request's done signal with when the response closes. One
 * shared instance: `abort()` without a reason builds a new DOMException, stack trace included, per
 * request (~3-5% of a GET's CPU, measured A/B with bench/ab.ts). Listeners (the session
 * lease's fallback release, spec 3.2 rule 2) only need the event, not a fresh reason.
 */
export const REQUEST_ENDED: DOMException = new DOMException('the request ended', 'AbortError');
