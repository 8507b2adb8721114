import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `condition` until it holds, for what another process or a reconnecting client does in its own
 * time. The deadline only stops a hang; it is generous on purpose (CI is busy), never an assertion.
 * Resolves with how long it took, for a log line.
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<number> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
  return performance.now() - started;
}

/**
 * Whether `work` settles (either way) before a timer of `ms` set now fires: an order of two events, not a
 * measured duration, for a bound the code under test enforces with a timer of its own (a connect, command,
 * drain or grace timeout). That timer is set after this one and is shorter, so on time it fires first
 * however busy the machine is; a lost or wrong bound waits longer and this one fires first.
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
