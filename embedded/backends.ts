// The in-memory fakes (fakes/) behind every port, and the demo users of `--embedded` (spec 3.5).
import { randomUUID } from 'node:crypto';
import { MemoryOrderCache } from '../fakes/memory-cache.ts';
import { MemoryEventBus } from '../fakes/memory-event-bus.ts';
import { MemoryStore } from '../fakes/memory-store.ts';
import type { Logger } from '../src/observability/logger.ts';
import type { Clock } from '../src/ports/clock.ts';
import { hashPassword } from '../src/service/password-hasher.ts';
import type { Backends } from '../src/composition/backends.ts';

/** The demo users of `--embedded` (README). Public fixtures, never present with real backends. */
export const DEMO_USERS = [
  { username: 'alice', password: 'alice-password' },
  { username: 'bob', password: 'bob-password' },
] as const;

export interface EmbeddedBackends extends Backends {
  readonly store: MemoryStore;
  readonly cacheFake: MemoryOrderCache;
  readonly bus: MemoryEventBus;
  /** The demo logins seeded (DEMO_USERS), or none. */
  readonly demoUsers: readonly { readonly username: string; readonly password: string }[];
}

/** In-memory fakes behind every port (fakes/), for `npm start` offline and the fast test suites. */
export async function createEmbeddedBackends(
  logger: Logger,
  options: { seedDemoUsers: boolean; clock?: Clock },
): Promise<EmbeddedBackends> {
  const store = new MemoryStore();
  // The cache's TTL runs on the service clock, so the simulator's clock advance expires entries too.
  const cache = new MemoryOrderCache({ clock: options.clock });
  const bus = new MemoryEventBus({ logger });
  if (options.seedDemoUsers) {
    for (const user of DEMO_USERS) {
      await store.add({ id: randomUUID(), username: user.username, passwordHash: await hashPassword(user.password) });
    }
  }
  return {
    store,
    cacheFake: cache,
    bus,
    demoUsers: options.seedDemoUsers ? DEMO_USERS : [],
    repository: store,
    credentials: store,
    cache,
    publisher: bus,
    subscriber: bus,
    outbox: store,
    ledger: store,
    components: [store, cache, bus],
  };
}
