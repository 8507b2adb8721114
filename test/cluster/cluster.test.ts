import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver, DriverName, Reply } from '../../conformance/drivers/driver.ts';
import { createDriver, DRIVER_NAMES } from '../../conformance/drivers/drivers.ts';
import { until } from '../support/eventually.ts';
import { CLUSTER_RPS, loopbackClient, startCluster, type Cluster, type ClusterReplica } from './cluster.ts';
import { budgetRate, offered, pacedLoad } from './paced-load.ts';

/**
 * Issue 14: three orders-grpc replicas on the real backends behind haproxy (npm run test:cluster; rules
 * CLUSTER-* in spec/rules.yaml). The tests run in order: the last one kills a replica.
 */
const VIEWS_PER_WIRE = 6;
const RATE_SECONDS = 4;

interface Created {
  readonly id: string;
  readonly item: string;
  readonly quantity: number;
  /** The owner's Authorization value. */
  readonly auth: string;
}

const succeeded = (reply: Reply): boolean => (reply.api === 'rest' ? reply.status! >= 200 && reply.status! < 300 : reply.code === 0);
const outcome = (reply: Reply): string => (reply.api === 'rest' ? String(reply.status) : (reply.codeName ?? ''));
const sorted = (ids: readonly string[]): string[] => [...ids].sort();

describe('three orders-grpc replicas behind haproxy (HTTP/1.1, h2c and gRPC balanced per request)', () => {
  let cluster: Cluster;
  const drivers: Driver[] = [];
  const created: Created[] = [];
  const driver = (name: DriverName, baseUrl = cluster.balancerUrl, retryRateLimited = true): Driver => {
    const made = createDriver(name, { baseUrl, adminUrl: undefined, hooks: undefined, retryRateLimited });
    drivers.push(made);
    return made;
  };
  const login = async (through: Driver): Promise<string> => {
    const reply = await through.login(await cluster.addUser());
    expect(succeeded(reply), JSON.stringify(reply)).toBe(true);
    return `Bearer ${(reply.body as { token: string }).token}`;
  };
  const recentOn = async (replica: ClusterReplica, auth: string): Promise<string[]> => {
    const reply = await driver('grpc', replica.baseUrl).recent(auth);
    expect(succeeded(reply), JSON.stringify(reply)).toBe(true);
    return (reply.body as { recent: string[] }).recent;
  };

  beforeAll(async () => {
    cluster = await startCluster();
  }, 180_000);

  afterAll(async () => {
    await Promise.all(drivers.map((d) => d.close().catch(() => undefined)));
    await cluster?.close();
  }, 60_000);

  it.each(DRIVER_NAMES)(
    '%s on one connection through the balancer: every replica serves some requests, and each keeps its own session',
    async (wire) => {
      const client = driver(wire);
      const auth = await login(client);
      const mine: Created[] = [];
      for (let i = 0; i < VIEWS_PER_WIRE; i++) {
        const reply = await client.createOrder(auth, { item: `${wire}-${i}`, quantity: i + 1 });
        expect(succeeded(reply), JSON.stringify(reply)).toBe(true);
        mine.push({ ...(reply.body as Omit<Created, 'auth'>), auth });
      }
      created.push(...mine);
      for (const order of mine) expect(outcome(await client.getOrder(auth, order.id))).toMatch(/^(200|OK)$/);

      // Each view is recorded by the replica that served it (spec 2.2: sessions are per process), so the
      // replicas' own lists, asked directly, tell where the balancer sent each GET.
      const perReplica = await Promise.all(cluster.replicas.map((replica) => recentOn(replica, auth)));
      console.log(`${wire}: views per replica ${perReplica.map((list) => list.length).join(' / ')}`);
      expect(sorted(perReplica.flat())).toStrictEqual(sorted(mine.map((o) => o.id)));
      for (const list of perReplica) expect(list.length).toBeGreaterThan(0);

      // What a client sees through the balancer: one replica's part of its history, never the whole.
      const through = await client.recent(auth);
      const recent = (through.body as { recent: string[] }).recent;
      expect(perReplica.map(sorted)).toContainEqual(sorted(recent));
      expect(recent.length).toBeLessThan(VIEWS_PER_WIRE);
    },
    60_000,
  );

  it('every order created through the balancer reads the same from every replica directly', async () => {
    expect(created).toHaveLength(VIEWS_PER_WIRE * DRIVER_NAMES.length);
    for (const replica of cluster.replicas) {
      const direct = driver('grpc', replica.baseUrl);
      for (const order of created) {
        const reply = await direct.getOrder(order.auth, order.id);
        expect(succeeded(reply), `${order.id} on ${replica.name}: ${JSON.stringify(reply)}`).toBe(true);
        expect(reply.body).toMatchObject({ id: order.id, item: order.item, quantity: order.quantity, status: 'pending' });
      }
    }
  });

  it("each order's `order placed` line appears exactly once across the fleet", async () => {
    const ids = created.map((order) => order.id);
    await until(async () => ids.every((id) => cluster.placedCounts().has(id)) && (await cluster.notifierIdle()), 'every order announced, nothing left to deliver', 30_000);
    const counts = cluster.placedCounts();
    expect(ids.map((id) => [id, counts.get(id)])).toStrictEqual(ids.map((id) => [id, 1]));
    // Announced by the replicas between them, not each by all: every replica's notifier took part.
    const announcers = cluster.replicas.filter((r) => r.process.lines.some((l) => l['msg'] === 'order placed' && ids.includes(l['order_id'] as string)));
    console.log(`order placed: ${ids.length} orders, announced by ${announcers.map((r) => r.name).join(', ')}`);
  });
});
