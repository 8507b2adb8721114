import { afterEach, describe, expect, it } from 'vitest';
import { hpack, pipeline, readingClients, zeroWindow } from '../support/edge-attacks.ts';
import { sampleRss, startBystander, startTarget, type EdgeTarget } from '../support/edge-target.ts';

/**
 * The hostile-client classes of rules H2-write-budget, HTTP1-pipeline-bound and H2-header-refusals
 * against the executables (spawned --embedded), at a tenth of `npm run attacks`' scale: what is
 * asserted is what is enforced (the process's memory stays within the budget that rules promise for
 * that many connections; another client is always answered; the attacker's connections are closed),
 * never how long anything took. Seconds of real load each: the real-backend suite runs them.
 */

const MiB = 1024 * 1024;
/** A guard against a hung run on a busy machine, never a measurement. */
const GUARD_MS = 120_000;
let target: EdgeTarget | undefined;
afterEach(async () => {
  await target?.stop();
  target = undefined;
});

async function underAttack(
  executable: 'grpc' | 'stdlib',
  attack: (t: EdgeTarget) => Promise<string>,
  warmUp?: (t: EdgeTarget) => Promise<void>,
) {
  target = await startTarget(executable);
  await warmUp?.(target);
  const before = target.rssMiB();
  const rss = sampleRss(target);
  const bystander = startBystander(target);
  const outcome = await attack(target);
  // One more bystander round after the attack ends: the service answers once it is over, too.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const seen = await bystander.stop();
  return { outcome, growthMiB: rss.stop() - before, bystander: seen };
}

describe('what one client can make the process hold (spawned --embedded executables)', () => {
  it(
    '[H2-write-budget] 60 zero-window connections of 128 ~25 KB answers each: under 160 MiB more than after the same calls read, the bystander always answered',
    async () => {
      // Without the budget: ~5.6 MB a connection (~340 MB here); with it 8 running streams and 32 slots
      // each (~1 MB measured at 150 connections), and the rest is the heap's own breathing. Measured after the same calls from
      // clients that read, so that the process is as warm as the attack makes it.
      const { outcome, growthMiB, bystander } = await underAttack(
        'grpc',
        (t) => zeroWindow(t, 60, 2_000),
        (t) => readingClients(t, 60),
      );
      console.log(`${outcome}; RSS +${growthMiB.toFixed(0)} MiB`);
      expect(growthMiB * MiB).toBeLessThan(160 * MiB);
      expect(bystander.failed).toBe(0);
      expect(bystander.answered).toBe(bystander.asked);
    },
    GUARD_MS,
  );

  it(
    '[HTTP1-pipeline-bound] 10 connections pipelining 10,000 list requests, never reading: under 64 MiB more, the bystander always answered',
    async () => {
      // Without the gate: ~40 MB a connection (400 MB here).
      const { growthMiB, bystander } = await underAttack('stdlib', (t) => pipeline(t, 10, 3_000));
      expect(growthMiB * MiB).toBeLessThan(64 * MiB);
      expect(bystander.failed).toBe(0);
      expect(bystander.answered).toBe(bystander.asked);
    },
    GUARD_MS,
  );

  it(
    '[H2-header-refusals] HPACK bombs from 4 connections for 2 s: each connection is closed, the bystander always answered',
    async () => {
      const { outcome, bystander } = await underAttack('grpc', (t) => hpack(t, 2));
      const closed = Number(/(\d+) closed by the server/.exec(outcome)?.[1]);
      const calmed = Number(/(\d+) with a GOAWAY ENHANCE_YOUR_CALM/.exec(outcome)?.[1]);
      const connections = Number(/over (\d+) connections/.exec(outcome)?.[1]);
      // Every connection but those the attackers dropped at the end was closed by the server. Its GOAWAY
      // is mostly lost to the reset of a socket closed with unread bytes (a paced sender reads it: the
      // conformance case refused-header-blocks-cost-the-connection).
      console.log(`${outcome}; ${calmed} GOAWAY read`);
      expect(closed).toBeGreaterThanOrEqual(connections - 4);
      expect(bystander.failed).toBe(0);
      expect(bystander.answered).toBe(bystander.asked);
    },
    GUARD_MS,
  );
});
