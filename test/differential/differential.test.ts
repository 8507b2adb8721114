// The differential check's machinery on the fakes alone (the fast suite): the seeded shapes change no answer, a
// seed replays, and a planted divergence is reported with its seed and first differing answer. The check against
// PostgreSQL, Redis and NATS is differential.real.test.ts.
import { describe, expect, it } from 'vitest';
import { report, type SeedRuns } from './diff.ts';
import { TieFlippedStore } from './planted.ts';
import { runSeedOnFakes, SeedClock, type Answer } from './run.ts';

const SEEDS = [1, 2, 3, 4, 5];
const RUN_TAG = 'fa57c0de';

/** An answer as JSON, but for a login's token (its iat and jti differ from run to run). */
const withoutToken = (answer: Answer | undefined): string => JSON.stringify(answer).replace(/"token":"[^"]*"/, '"token":""');

async function runs(left: (seed: number) => Promise<Answer[]>, right: (seed: number) => Promise<Answer[]>): Promise<SeedRuns[]> {
  const all: SeedRuns[] = [];
  for (const seed of SEEDS) all.push({ seed, clockStartMs: new SeedClock(seed).startMs, left: await left(seed), right: await right(seed) });
  return all;
}

/** A list answer in which two neighbours have the same created_at: where a store that orders ties otherwise shows it. */
function showsTie(answer: Answer): boolean {
  const orders = answer.step.startsWith('list ') ? ((answer.body as { orders: Array<{ created_at: string }> }).orders ?? []) : [];
  return orders.some((order, i) => i > 0 && order.created_at === orders[i - 1]!.created_at);
}

describe('differential check on the fakes', () => {
  it('[FAKE-differential] the fakes answer a seed alike with and without its shapes, and a seed replays answer for answer', async () => {
    const batches: Array<readonly string[]> = [];
    const all = await runs(
      (seed) => runSeedOnFakes(seed, RUN_TAG, { onBatches: (b) => batches.push(...b) }),
      (seed) => runSeedOnFakes(seed, RUN_TAG, { shapes: false }),
    );
    const verdict = report(all, ['seeded fakes', 'unseeded fakes']);
    expect(verdict.differences, verdict.text).toEqual([]);
    // The workload exercises what it is for: ties, several orders per list, announcements of every order.
    const answers = all.flatMap((r) => r.left);
    expect(answers.some((a) => a.step.startsWith('list') && (a.body as { orders?: unknown[] }).orders!.length > 2)).toBe(true);
    expect(answers.some((a) => a.status === 422)).toBe(true);
    const announced = answers.filter((a) => a.status === 0).flatMap((a) => a.body as Array<[string, number]>);
    expect(announced.length).toBeGreaterThan(10);
    expect(announced.every(([, count]) => count === 1)).toBe(true);
    // ... while the seeded broker handed the notifier batches of several events, a batch holding one event twice,
    // and events again that it had delivered before (lost acks).
    expect(batches.some((b) => new Set(b).size > 1)).toBe(true);
    expect(batches.some((b) => new Set(b).size < b.length)).toBe(true);
    const deliveries = batches.flatMap((b) => [...new Set(b)]);
    expect(new Set(deliveries).size).toBeLessThan(deliveries.length);
    expect((await runSeedOnFakes(SEEDS[0]!, RUN_TAG)).map(withoutToken)).toEqual(all[0]!.left.map(withoutToken));
  });

  it('[FAKE-differential] a planted divergence, ties listed by id ascending, is reported with its seed and its first differing answer', async () => {
    const all = await runs(
      (seed) => runSeedOnFakes(seed, RUN_TAG, { shapes: false, store: new TieFlippedStore() }),
      (seed) => runSeedOnFakes(seed, RUN_TAG, { shapes: false }),
    );
    // Where the runs must part, found without the check: the first list that shows two orders of one instant.
    const parting = all.map((r) => ({ seed: r.seed, at: r.left.findIndex(showsTie) })).filter((p) => p.at >= 0);
    expect(parting.length).toBeGreaterThan(0);
    const verdict = report(all, ['planted fakes', 'fakes']);
    expect(verdict.differences.map((d) => [d.seed, d.answer])).toEqual(parting.map((p) => [p.seed, p.at + 1]));
    const first = parting[0]!;
    expect(verdict.text).toContain(`seed ${first.seed}: answer ${first.at + 1} of `);
    expect(verdict.differences[0]!.step).toMatch(/^list /);
  });
});
