// Every port on the in-memory fakes of fakes/, and the demo users `--embedded` seeds (spec 3.5): the
// backends of `npm start` offline and of the fast test suites.
import { randomUUID } from 'node:crypto';
import { MemoryOrderCache } from '../fakes/memory-cache.ts';
import { MemoryEventBus } from '../fakes/memory-event-bus.ts';
import { MemoryStore } from '../fakes/memory-store.ts';
import type { Backends } from '../src/composition/backends.ts';
import type { Logger } from '../src/observability/logger.ts';
import type { Clock } from '../src/ports/clock.ts';

/**
 * Public fixtures (README), never present with real backends. Each hash is the scrypt of its password at
 * the production cost, computed once and written here: an `--embedded` start derived both (~75 ms of CPU),
 * and the fast suite starts hundreds. index.test.ts logs each in.
 */
export const DEMO_USERS = [
  {
    username: 'alice',
    password: 'alice-password',
    passwordHash: 'scrypt$16384$8$1$iSxLVxAs6JBqghbkWLzvHw$HPv8LimsXBi0OjNLBh98ukPrAG-XLQqJsj9I-NarHEM',
  },
  {
    username: 'bob',
    password: 'bob-password',
    passwordHash: 'scrypt$16384$8$1$C0hSwVfAWBDK1pU1ZYlIGw$HLVdeJXYnaqCZ80eQIj5paD1yVIzvrTdjO78JmLt_YQ',
  },
] as const;

/** The ports, and the fakes behind them for the simulator's switches. */
export interface EmbeddedBackends extends Backends {
  readonly store: MemoryStore;
  readonly cacheFake: MemoryOrderCache;
  readonly bus: MemoryEventBus;
  /** The demo logins seeded (DEMO_USERS), or none. */
  readonly demoUsers: readonly { readonly username: string; readonly password: string }[];
}

export async function createEmbeddedBackends(
  logger: Logger,
  options: { seedDemoUsers: boolean; clock?: Clock },
): Promise<EmbeddedBackends> {
  const store = new MemoryStore();
  // The cache's TTL runs on the service clock, so the simulator's clock advance expires entries too.
  const cache = new MemoryOrderCache({ clock: options.clock });
  const bus = new MemoryEventBus({ logger });
  const demoUsers = options.seedDemoUsers ? DEMO_USERS : [];
  for (const user of demoUsers) await store.add({ id: randomUUID(), username: user.username, passwordHash: user.passwordHash });
  const ports = { repository: store, credentials: store, cache, publisher: bus, subscriber: bus, outbox: store, ledger: store };
  return { ...ports, store, cacheFake: cache, bus, demoUsers, components: [store, cache, bus] };
}
