import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How long one wait of a test may last before the test calls it hung. A guard, never an assertion: every
 * wait is for a condition (an event, a log line, a state), and this bound only turns a hang into a failure
 * that names what was awaited. Generous on purpose: a CI machine shared with other jobs starts a spawned
 * executable, or boots PGlite, many times slower than an idle one.
 */
export const HANG_GUARD_MS = 60_000;

/**
 * vitest's own limit on one test and on one hook (vitest.config.ts, the conformance matrix's cases): above
 * HANG_GUARD_MS, so that a wait that hangs fails with its own message first. Also a guard only.
 */
export const TEST_HANG_GUARD_MS = 4 * HANG_GUARD_MS;

/**
 * Polls `condition` until it holds, for what another process or a reconnecting client does in its own
 * time. The deadline only stops a hang (HANG_GUARD_MS), never an assertion. Resolves with how long it
 * took, for a log line.
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = HANG_GUARD_MS): Promise<number> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
  return performance.now() - started;
}

/**
 * Resolves once `work` has settled, either way, for an end the code under test brings about itself (a
 * deadline, a grace, a refusal, a reset): without it `work` stays pending, and the hang guard fails the
 * test naming `what`. It asserts no duration; a test checks what settled it (the code, the reset, the
 * state) after it.
 */
export async function settled(work: Promise<unknown>, what: string, guardMs = HANG_GUARD_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${guardMs} ms (a hang) for ${what}`)), guardMs);
  });
  try {
    await Promise.race([
      work.then(
        () => undefined,
        () => undefined,
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether `work` settles (either way) before a timer of `fallbackMs` set now fires: for a bound the code
 * enforces (a grace, a deadline, a connect timeout) that a longer one would also end if it were lost (a
 * default, another layer's guard). `fallbackMs` is that longer bound's own length, never a guess at how
 * fast the machine is: a lost bound leaves the work to the fallback, whose timer was set before this one,
 * and the answer is false; the bound under test, many times shorter, loses only if this process stalls
 * for about the whole fallback. An order of the code's own two bounds, not a measured duration. Where no
 * fallback exists, wait with `settled` instead.
 */
export async function settlesBefore(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
