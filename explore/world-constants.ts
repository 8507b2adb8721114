// The fixed numbers and addresses of the world: the client timeout, time-stepping grain, the
// balancer, the errors a request ends with. Shared by every layer of the World.

/** How long a client waits for an answer before it calls the request ambiguous (and may retry). */
export const CLIENT_TIMEOUT_MS = 1_000;
/** Advances up to this long go timer by timer; longer ones in pieces (a 50 ms relay poll over a day is 1.7 M timers). */
export const FINE_ADVANCE_MS = 3_000;
/** The balancer in front of the fleet (TRUST_PROXY in EXPLORE_ENV). */
export const PROXY = '10.9.0.1';
/** An address a client writes into X-Forwarded-For to pick its own bucket: never believed. */
export const SPOOFED = '203.0.113.7';
/** The reason a request's signal ends with when its answer is sent (as a transport's response closes). */
export const REQUEST_ENDED = new Error('request ended');
export const CLIENT_GONE = new Error('client went away');
/** The shared store's command bound (src/adapters/redis/rate-limit-store.ts's default): a slower Redis is an outage to the limiter. */
export const SHARED_STORE_TIMEOUT_MS = 250;
