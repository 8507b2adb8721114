import { describe, expect, test } from 'vitest';
import {
  acksBeforeRecording,
  announcesFirstOfBatch,
  fingerprintWithoutQuantity,
  gateIgnoresAbort,
  limitClampedToMaximum,
  lingerTimerNotCleared,
  lookupOutsideTransaction,
  marksBeforeAck,
  relayLoopStopsOnFailure,
  sessionKeptOnThrow,
  sessionPerToken,
  tokenAcceptedAtExpiry,
} from './broken-variants.ts';
import { DEFAULT_SHAPE, exploreSeed } from './explorer.ts';
import { INVARIANTS, type InvariantId } from './invariants.ts';
import type { Variant } from './replica.ts';
import { runSchedule } from './run.ts';

/**
 * The explorer in npm test: a fixed set of seeds against the real service code (every invariant must
 * hold), replay (a seed is its digest), and the checker checked: each deliberately broken variant
 * (explore/broken-variants.ts, switched on here only) must be caught within a bounded number of seeds.
 * `.ci/run` runs 1,000 seeds x 200 steps (npm run explore); README "Exploring" has the night-long run.
 */
const SHAPE = { ...DEFAULT_SHAPE };
/**
 * A few seeds: each runs the whole service through hundreds of steps (~0.3 s of CPU); `.ci/run` runs 1,000
 * of them, so here they are a smoke check of the clean service beside the variants below.
 */
const FIXED_SEEDS = 3;
/**
 * Seeds that once failed, kept as regressions. 1326: the after-run drain stopped while a delivery that a
 * killed replica had failed was still waiting for its redelivery (an explorer bug, not the service's).
 * Seed 9 found a login of a user whose stored hash has a cost scrypt refuses answering 500 (fixed in
 * src/service/password-hasher.ts); it is not kept: the workload changed since, its schedule no longer logs
 * in such a user, and the hasher's unit case guards the fix.
 */
const REGRESSION_SEEDS = [1326];
/**
 * Each variant must be caught within this many seeds (seeds 1, 2, …). Its test runs first the seed that
 * caught it first when it was recorded (explore/README.md, "Broken variants"), so npm test pays for one
 * run per variant rather than for every seed before it; only when a change to the workload or the fleet
 * moved it does the test search seeds 1 to SEED_BOUND, and it prints the seed to record.
 */
const SEED_BOUND = 40;
/**
 * The replay test's runs, a quarter of a full one: the first 50 steps of seed 12 hold a kill, a graceful
 * stop, two restarts, a fault and its heal, abandoned requests and a login storm before the after-run
 * drain, so every source a run could differ by (ids, the relay's jitter, the fakes' shapes, the loops on
 * the clock) is in it.
 */
const REPLAY_SHAPE = { ...SHAPE, steps: 50 };

describe('explore: the service', () => {
  // The tag lists every invariant (conformance/unit-rules.ts reads tags from single-quoted titles).
  test('[EXPLORE-answers, EXPLORE-created-readable, EXPLORE-no-phantom, EXPLORE-key-once, EXPLORE-announced, EXPLORE-list, EXPLORE-get-owner, EXPLORE-recent, EXPLORE-session-flush, EXPLORE-session-retention, EXPLORE-rate, EXPLORE-login-gate, EXPLORE-health] the service holds every invariant on the fixed seeds', async () => {
    let checks = 0;
    for (const seed of [...Array.from({ length: FIXED_SEEDS }, (_, i) => i + 1), ...REGRESSION_SEEDS]) {
      const outcome = await exploreSeed(seed, SHAPE);
      expect(outcome.result.violation?.message, `seed ${seed}: shrunk to ${JSON.stringify(outcome.shrunk?.steps)}`).toBeUndefined();
      checks += outcome.result.checks;
    }
    // Every seed checks hundreds of things: a run that checks nothing would pass too.
    expect(checks).toBeGreaterThan(FIXED_SEEDS * 200);
    expect(Object.keys(INVARIANTS)).toHaveLength(13);
  });

  test('[EXPLORE-replay] the same seed gives the same trace and digest; another seed another', async () => {
    const first = await exploreSeed(12, REPLAY_SHAPE, { shrink: false });
    const again = await exploreSeed(12, REPLAY_SHAPE, { shrink: false });
    const other = await exploreSeed(18, REPLAY_SHAPE, { shrink: false });
    expect(again.result.trace).toEqual(first.result.trace);
    expect(again.result.digest).toBe(first.result.digest);
    expect(other.result.digest).not.toBe(first.result.digest);
    expect(first.result.trace.length).toBeGreaterThan(REPLAY_SHAPE.steps);
  });
});

/**
 * Runs `variant` at `recordedSeed`, the first seed that caught it (explore/README.md's table); if that seed
 * no longer fails, seeds 1, 2, … up to SEED_BOUND. The failure found must be `invariant`'s: a variant
 * caught by another invariant means the checker or the variant changed. Returns the seed that caught it.
 */
async function seedFinding(variant: Variant, invariant: InvariantId, recordedSeed: number): Promise<number> {
  expect(recordedSeed, `${variant.name}: a recorded seed past the bound proves nothing`).toBeLessThanOrEqual(SEED_BOUND);
  const run = (seed: number) => exploreSeed(seed, { ...SHAPE, variant }, { shrink: false });
  let found: Awaited<ReturnType<typeof exploreSeed>> | undefined = await run(recordedSeed);
  if (found.result.violation === undefined) {
    found = undefined;
    for (let seed = 1; found === undefined && seed <= SEED_BOUND; seed++) {
      if (seed === recordedSeed) continue;
      const outcome = await run(seed);
      if (outcome.result.violation !== undefined) found = outcome;
    }
    if (found !== undefined)
      console.log(
        `explore: "${variant.name}" is no longer caught at its recorded seed ${recordedSeed} but at seed ${found.seed}: record that seed in explore.test.ts and explore/README.md`,
      );
  }
  const caught = found?.result.violation;
  expect(caught?.invariant, `${variant.name}: ${caught === undefined ? `not caught in seeds 1-${SEED_BOUND}` : caught.message}`).toBe(
    invariant,
  );
  return found?.seed ?? Number.POSITIVE_INFINITY;
}

describe(`explore: the checker is checked (each broken variant found within ${SEED_BOUND} seeds)`, () => {
  test('[EXPLORE-announced, EXPLORE-replay] finds a notifier that acknowledges before recording', async () => {
    expect(await seedFinding(acksBeforeRecording, INVARIANTS.announced, 4)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-announced, EXPLORE-replay] finds a relay that marks sent before the broker acknowledges', async () => {
    expect(await seedFinding(marksBeforeAck, INVARIANTS.announced, 1)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-key-once, EXPLORE-replay] finds an idempotency lookup outside the transaction', async () => {
    expect(await seedFinding(lookupOutsideTransaction, INVARIANTS.keyOnce, 7)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-session-retention, EXPLORE-replay] finds a session not released when an operation throws', async () => {
    // Seen at the first health probe after it (a session held between steps), before the run's end checks.
    expect(await seedFinding(sessionKeptOnThrow, INVARIANTS.retention, 1)).toBeLessThanOrEqual(SEED_BOUND);
  });

  // One per class of mistake that scripted tests missed (explore/README.md, "Broken variants").
  test('[EXPLORE-announced, EXPLORE-replay] batch: finds a notifier that announces only the first event of a batch', async () => {
    expect(await seedFinding(announcesFirstOfBatch, INVARIANTS.announced, 1)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-key-once, EXPLORE-replay] key reuse: finds an idempotency fingerprint that ignores the quantity', async () => {
    expect(await seedFinding(fingerprintWithoutQuantity, INVARIANTS.keyOnce, 1)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-login-gate, EXPLORE-replay] cancellation: finds a login gate that keeps the waits of callers that went away', async () => {
    expect(await seedFinding(gateIgnoresAbort, INVARIANTS.loginGate, 2)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-announced, EXPLORE-replay] relay loop: finds a relay loop that stops after a failed round', async () => {
    expect(await seedFinding(relayLoopStopsOnFailure, INVARIANTS.announced, 1)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-session-retention, EXPLORE-replay] window: finds a linger timer not cleared when a session is taken again', async () => {
    expect(await seedFinding(lingerTimerNotCleared, INVARIANTS.retention, 2)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-answers, EXPLORE-replay] boundary: finds a token accepted up to a second past its expiry', async () => {
    expect(await seedFinding(tokenAcceptedAtExpiry, INVARIANTS.answers, 2)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-list, EXPLORE-replay] clamp: finds a list limit above 100 clamped to 100 instead of 20', async () => {
    expect(await seedFinding(limitClampedToMaximum, INVARIANTS.list, 2)).toBeLessThanOrEqual(SEED_BOUND);
  });

  test('[EXPLORE-session-retention, EXPLORE-replay] retention: finds sessions keyed by token instead of user', async () => {
    expect(await seedFinding(sessionPerToken, INVARIANTS.retention, 1)).toBeLessThanOrEqual(SEED_BOUND);
  });

  // sessionKeptOnThrow: seed 1 fails a step check at step 19, so each of the shrinker's replays runs at
  // most those 20 steps (a variant caught by the after-run checks replays all 200 and the drain, tens of times).
  test('[EXPLORE-replay] a violation replays the same, and shrinks to a short step list that still fails the same invariant', async () => {
    const outcome = await exploreSeed(1, { ...SHAPE, variant: sessionKeptOnThrow });
    // The same seed replays the same violation (a variant's seed is as replayable as a clean one's).
    const again = await exploreSeed(1, { ...SHAPE, variant: sessionKeptOnThrow }, { shrink: false });
    expect(again.result.violation?.message).toBe(outcome.result.violation?.message);
    expect(again.result.digest).toBe(outcome.result.digest);
    const failingPrefix = (outcome.result.violation?.step ?? SHAPE.steps) + 1;
    const shrunk = outcome.shrunk;
    expect(shrunk?.invariant).toBe(INVARIANTS.retention);
    expect(shrunk?.steps.length).toBeLessThan(failingPrefix / 4);
    const replay = await runSchedule(shrunk?.steps ?? [], {
      seed: 1,
      replicas: SHAPE.replicas,
      users: SHAPE.users,
      variant: sessionKeptOnThrow,
    });
    expect(replay.violation?.invariant).toBe(INVARIANTS.retention);
    // And the correct service passes the very same steps.
    const correct = await runSchedule(shrunk?.steps ?? [], { seed: 1, replicas: SHAPE.replicas, users: SHAPE.users });
    expect(correct.violation).toBeUndefined();
  });
});
