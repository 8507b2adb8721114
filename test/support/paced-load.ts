import { setTimeout as sleep } from 'node:timers/promises';

export interface Sample<T> {
  readonly index: number;
  /** performance.now() when the request was handed to the client, and when its answer was complete. */
  readonly sentAt: number;
  readonly doneAt: number;
  readonly result: T;
}

/**
 * Fires `count` requests at `perSecond` on a fixed schedule (an open loop: a slow answer never slows the
 * load; a late timer sends at once to catch up), without waiting for answers in between. Bounded in
 * count, and in time: nothing more is sent once twice the planned duration (plus 5 s) has passed, or
 * once `stop()` is true. `onSent(i)` runs after the i-th request was handed out (to kill a replica
 * mid-load, for example).
 */
export async function pacedLoad<T>(
  count: number,
  perSecond: number,
  fire: (index: number) => Promise<T>,
  { onSent = () => undefined, stop = () => false }: { onSent?: (index: number) => void; stop?: () => boolean } = {},
): Promise<Sample<T>[]> {
  const gapMs = 1000 / perSecond;
  const startedAt = performance.now();
  const deadline = startedAt + 2 * count * gapMs + 5_000;
  const pending: Promise<Sample<T>>[] = [];
  for (let index = 0; index < count && performance.now() < deadline && !stop(); index++) {
    const due = startedAt + index * gapMs - performance.now();
    if (due > 0) await sleep(due);
    const sentAt = performance.now();
    pending.push(fire(index).then((result) => ({ index, sentAt, doneAt: performance.now(), result })));
    onSent(index);
  }
  return Promise.all(pending);
}

export interface OfferedLoad {
  /** Requests per second the sender actually achieved, first send to last. */
  readonly perSecond: number;
  /** The longest pause between two sends, in ms. */
  readonly maxGapMs: number;
}

export function offered(samples: readonly Sample<unknown>[]): OfferedLoad {
  const sent = samples.map((s) => s.sentAt).sort((a, b) => a - b);
  let maxGapMs = 0;
  for (let i = 1; i < sent.length; i++) maxGapMs = Math.max(maxGapMs, (sent[i] as number) - (sent[i - 1] as number));
  const spanMs = (sent.at(-1) ?? 0) - (sent[0] ?? 0);
  return { perSecond: spanMs > 0 ? ((sent.length - 1) * 1000) / spanMs : 0, maxGapMs };
}

export interface BudgetRate {
  readonly accepted: number;
  /** Seconds between the first and the last decision, each placed midway between send and answer. */
  readonly windowSeconds: number;
  /** (accepted - burst) / window: the refill rate the limiter granted beyond its initial burst. */
  readonly perSecond: number;
  /** How far the window could be off (half the latency of the first and of the last request), in seconds. */
  readonly windowUncertaintySeconds: number;
}

/**
 * The token bucket's own arithmetic (src/rate-limit/store.ts, the same in the Redis script):
 * a fresh client starts with `burst` tokens and gains RATE_LIMIT_RPS per second, capped at `burst`. Under
 * a load that never pauses long enough to refill the whole bucket, everything it admits from the first
 * decision to the last is burst + rate x window, less under one token left at the end. So
 * (accepted - burst) / window is the refill rate, whatever the scheduling of the requests.
 */
export function budgetRate(
  samples: readonly Sample<unknown>[],
  isAccepted: (sample: Sample<unknown>) => boolean,
  burst: number,
): BudgetRate {
  const byDecision = [...samples].sort((a, b) => a.sentAt + a.doneAt - (b.sentAt + b.doneAt));
  const first = byDecision[0];
  const last = byDecision.at(-1);
  if (first === undefined || last === undefined) throw new Error('budgetRate: no samples');
  const windowSeconds = (last.sentAt + last.doneAt - first.sentAt - first.doneAt) / 2 / 1000;
  const accepted = samples.filter(isAccepted).length;
  return {
    accepted,
    windowSeconds,
    perSecond: (accepted - burst) / windowSeconds,
    windowUncertaintySeconds: (first.doneAt - first.sentAt + (last.doneAt - last.sentAt)) / 2 / 1000,
  };
}
