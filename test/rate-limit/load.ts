import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { pacedLoad } from '../support/paced-load.ts';
import { RATE_LIMIT_CHANNEL, type RateLimitEvent } from '../../src/transports/http/http-rate-limiter.ts';

/** Every decision any limiter in this process takes while `work` runs (the limiter's own record). */
export async function recordDecisions(work: () => Promise<void>): Promise<RateLimitEvent[]> {
  const events: RateLimitEvent[] = [];
  const listen = (message: unknown): void => void events.push(message as RateLimitEvent);
  subscribe(RATE_LIMIT_CHANNEL, listen);
  try {
    await work();
  } finally {
    unsubscribe(RATE_LIMIT_CHANNEL, listen);
  }
  return events;
}

/** `count` requests to `path` on the given base URLs in turn, paced at `perSecond`; the statuses in send order. */
export async function offerLoad(baseUrls: readonly string[], perSecond: number, count: number, path = '/me/recent'): Promise<number[]> {
  const samples = await pacedLoad(count, perSecond, (i) => fetch(`${baseUrls[i % baseUrls.length] as string}${path}`).then(async (response) => (await response.arrayBuffer(), response.status)));
  return samples.map((sample) => sample.result);
}

export interface WindowCount {
  /** Limiter-clock ms between the first and the last refusal. */
  readonly windowMs: number;
  /** Requests allowed after the first refusal, up to the last one. */
  readonly accepted: number;
  /** Requests decided in the same window. */
  readonly offered: number;
}

/**
 * Counts over the window bounded by the first and the last refusal, on the limiter's own clock. A refusal
 * means the bucket held less than one token, so between two of them the bucket admitted exactly what it
 * refilled, RATE_LIMIT_RPS x window ± 1, whatever the scheduling of the requests (as long as the load
 * never paused for a whole bucket's refill time). This is the figure the test holds to ± 10%.
 */
export function countBetweenRefusals(events: readonly RateLimitEvent[]): WindowCount | undefined {
  const sorted = [...events].sort((a, b) => a.decision.atMs - b.decision.atMs);
  const first = sorted.findIndex((e) => !e.decision.allowed);
  const last = sorted.findLastIndex((e) => !e.decision.allowed);
  if (first < 0 || last <= first) return undefined;
  const inside = sorted.slice(first + 1, last + 1);
  return {
    windowMs: (sorted[last] as RateLimitEvent).decision.atMs - (sorted[first] as RateLimitEvent).decision.atMs,
    accepted: inside.filter((e) => e.decision.allowed).length,
    offered: inside.length,
  };
}
