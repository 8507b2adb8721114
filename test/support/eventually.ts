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
