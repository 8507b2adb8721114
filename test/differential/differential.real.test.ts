// The differential check (test/differential/README.md): the same seeded workload through the service on the fakes
// (with each seed's shapes) and on the real PostgreSQL, Redis and NATS gives the same answers, and a planted
// fake/real divergence is reported with its seed and first differing answer.
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsConfigFromEnv } from '../../src/adapters/nats/config.ts';
import type { NatsEventBus } from '../../src/adapters/nats/event-bus.ts';
import { ORDER_STREAM_DEFAULTS } from '../../src/adapters/nats/order-stream.ts';
import { createRealBackends, realBackendConfig } from '../../src/composition/real-backends.ts';
import { report, type SeedRuns } from './diff.ts';
import { TieFlippedStore } from './planted.ts';
import { runSeed, runSeedOnFakes, SeedClock, silentLogger, startBackdrop, type Answer, type Backdrop } from './run.ts';

/** The seed count fakes/README.md states. */
const SEEDS = Array.from({ length: 100 }, (_, i) => i + 1);
/** Seeds the planted divergence is looked for in (the real answers of the run above, kept). */
const PLANTED_SEEDS = SEEDS.slice(0, 20);

/** A list answer in which two neighbours have the same created_at: where a store that orders ties otherwise shows it. */
function showsTie(answer: Answer): boolean {
  const orders = answer.step.startsWith('list ') ? ((answer.body as { orders: Array<{ created_at: string }> }).orders ?? []) : [];
  return orders.some((order, i) => i > 0 && order.created_at === orders[i - 1]!.created_at);
}

describe('differential check: the fakes against PostgreSQL, Redis and NATS', () => {
  // One private schema, key prefix and stream for the run; ids and usernames carry the run tag and the seed.
  const runTag = randomBytes(4).toString('hex');
  const real = new Map<number, Answer[]>();
  let backdrop: Backdrop;
  /** A connection of the test's own, to ask JetStream whether the notifier's consumer holds anything unacknowledged. */
  let nc: NatsConnection;

  beforeAll(async () => {
    const backends = await createRealBackends(realBackendConfig(process.env), silentLogger, {
      schema: `diff_${runTag}`,
      uniqueSuffix: runTag,
      dropSchemaOnStop: true,
    });
    const nats = natsConfigFromEnv(process.env);
    nc = await connect({ servers: [...nats.servers], ...nats.credentials });
    const jsm = await jetstreamManager(nc);
    const stream = (backends.subscriber as NatsEventBus).stream;
    backdrop = await startBackdrop(backends, async () => {
      const consumer = await jsm.consumers.info(stream, ORDER_STREAM_DEFAULTS.durable);
      return consumer.num_pending === 0 && consumer.num_ack_pending === 0;
    });
  });

  afterAll(async () => {
    await backdrop?.stop();
    await nc?.close();
  });

  it(
    `[FAKE-differential] ${SEEDS.length} seeds: every answer on the fakes is the answer on the real backends`,
    { timeout: 180_000 },
    async () => {
      const all: SeedRuns[] = [];
      for (const seed of SEEDS) {
        const right = await runSeed(backdrop, seed, runTag);
        real.set(seed, right);
        all.push({ seed, clockStartMs: new SeedClock(seed).startMs, left: await runSeedOnFakes(seed, runTag), right });
      }
      const verdict = report(all);
      expect(verdict.differences, verdict.text).toEqual([]);
      // Every seed's answers were compared, down to its last step (the announcements of all its orders).
      expect(all.every((r) => r.left.length === r.right.length && r.right.at(-1)?.status === 0)).toBe(true);
      const announced = all.flatMap((r) => r.right.at(-1)!.body as Array<[string, number]>);
      expect(announced.length).toBeGreaterThan(SEEDS.length * 5);
      expect(announced.filter(([, count]) => count !== 1)).toEqual([]);
    },
  );

  it('[FAKE-differential] a planted divergence, a fake store that lists ties by id ascending, is reported with its seed and first differing answer', async () => {
    expect(real.size, 'the real answers of the run above').toBe(SEEDS.length);
    const all: SeedRuns[] = [];
    for (const seed of PLANTED_SEEDS) {
      const left = await runSeedOnFakes(seed, runTag, { store: new TieFlippedStore({ seed }) });
      all.push({ seed, clockStartMs: new SeedClock(seed).startMs, left, right: real.get(seed)! });
    }
    // Where the runs must part, found without the check: the first list that shows two orders of one instant.
    const parting = all.map((r) => ({ seed: r.seed, at: r.left.findIndex(showsTie) })).filter((p) => p.at >= 0);
    expect(parting.length).toBeGreaterThan(0);
    const verdict = report(all);
    const first = parting[0]!;
    expect(verdict.differences.map((d) => [d.seed, d.answer])).toEqual(parting.map((p) => [p.seed, p.at + 1]));
    expect(verdict.text).toContain(`seed ${first.seed}: answer ${first.at + 1} of `);
    expect(verdict.differences[0]!.step).toMatch(/^list /);
  });
});
