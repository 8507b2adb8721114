// One seed run: a World (drain.ts, built in layers from world.ts) driven through a schedule, its
// trace digested. What explorer.ts, cli.ts and the tests import.
import { Violation } from './invariants.ts';
import type { Step } from './workload.ts';
import type { RunOptions, RunResult } from './world-types.ts';
import { World } from './drain.ts';

/** One seed: a fleet, a schedule, the checks. Deterministic: the same steps give the same trace. */
export async function runSchedule(steps: readonly Step[], options: RunOptions): Promise<RunResult> {
  const world = new World(options);
  await world.start();
  try {
    for (let i = 0; i < steps.length; i++) {
      try {
        await world.step(i, steps[i] as Step);
      } catch (error) {
        if (error instanceof Violation) error.step ??= i;
        throw error;
      }
    }
    await world.finish();
    return { digest: world.digest(), checks: world.checks.count, violation: undefined, trace: world.trace };
  } catch (error) {
    if (!(error instanceof Violation)) throw error;
    world.note(`violation ${error.message}`);
    return { digest: world.digest(), checks: world.checks.count, violation: error, trace: world.trace };
  } finally {
    await world.dispose();
  }
}

export { CLIENT_TIMEOUT_MS } from './world-constants.ts';
export type { RunOptions, RunResult } from './world-types.ts';
