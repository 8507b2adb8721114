import { createHash } from 'node:crypto';
import type { InvariantId } from './invariants.ts';
import type { Variant } from './replica.ts';
import { runSchedule, type RunResult } from './run.ts';
import { generateSchedule, type Step } from './workload.ts';

export interface ExploreShape {
  readonly steps: number;
  readonly replicas: number;
  readonly users: number;
  readonly variant?: Variant | undefined;
}

export const DEFAULT_SHAPE = { steps: 200, replicas: 3, users: 3 } as const;

export interface SeedOutcome {
  readonly seed: number;
  readonly result: RunResult;
  /** Set when an invariant failed: the shortest schedule found that still fails it. */
  readonly shrunk?: {
    readonly invariant: InvariantId;
    readonly steps: readonly Step[];
    readonly message: string;
    readonly replays: number;
  };
}

/** One seed: its schedule, run; on a violation, shrunk. */
export async function exploreSeed(seed: number, shape: ExploreShape, options: { shrink?: boolean } = {}): Promise<SeedOutcome> {
  const schedule = generateSchedule(seed, shape);
  const run = (steps: readonly Step[]): Promise<RunResult> =>
    runSchedule(steps, { seed, replicas: shape.replicas, users: shape.users, variant: shape.variant });
  const result = await run(schedule);
  if (result.violation === undefined || options.shrink === false) return { seed, result };
  return { seed, result, shrunk: await shrink(schedule, result, run) };
}

/**
 * Delta debugging (Zeller's ddmin, simplified): drop ever smaller chunks of the schedule and keep a
 * smaller one whenever the same invariant still fails on it. The steps are data and the run draws its
 * ids from its own stream, so any sub-list is a valid schedule. Bounded in replays.
 */
async function shrink(schedule: readonly Step[], first: RunResult, run: (steps: readonly Step[]) => Promise<RunResult>, maxReplays = 400) {
  const invariant = (first.violation as NonNullable<RunResult['violation']>).invariant;
  const failedAt = first.violation?.step;
  let steps = failedAt === undefined ? [...schedule] : schedule.slice(0, failedAt + 1);
  let message = first.violation?.message ?? '';
  let replays = 0;
  let chunk = Math.max(1, Math.floor(steps.length / 2));
  while (chunk >= 1 && replays < maxReplays) {
    let removedAny = false;
    for (let start = 0; start < steps.length && replays < maxReplays;) {
      const candidate = [...steps.slice(0, start), ...steps.slice(start + chunk)];
      replays += 1;
      const result = candidate.length === 0 ? undefined : await run(candidate);
      if (result?.violation?.invariant === invariant) {
        const at = result.violation.step;
        steps = at === undefined ? candidate : candidate.slice(0, at + 1);
        message = result.violation.message;
        removedAny = true;
      } else {
        start += chunk;
      }
    }
    if (!removedAny) chunk = Math.floor(chunk / 2);
  }
  return { invariant, steps, message, replays };
}

/** The digest of a run of many seeds: of their digests, in seed order. */
export function combinedDigest(digests: readonly string[]): string {
  const hash = createHash('sha256');
  for (const digest of digests) hash.update(`${digest}\n`);
  return hash.digest('hex').slice(0, 16);
}
