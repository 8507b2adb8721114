import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { RATE_LIMIT_CHANNEL, type RateLimitEvent } from '../../src/rate-limit/limiter.ts';

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
