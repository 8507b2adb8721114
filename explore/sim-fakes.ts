import { MemoryOrderCache } from '../fakes/memory-cache.ts';
import { MemoryEventBus } from '../fakes/memory-event-bus.ts';
import { MemoryStore } from '../fakes/memory-store.ts';
import { Trouble } from '../fakes/trouble.ts';
import type { Logger } from '../src/ports/logger.ts';
import type { SimRuntime } from './sim-runtime.ts';

/**
 * The fakes' trouble switch with `slow` on simulated time: a slow backend holds each call for that
 * long on the fleet's clock instead of the machine's (everything else is the fakes' own Trouble).
 */
export class SimTrouble extends Trouble {
  readonly #runtime: SimRuntime;
  #simDelayMs = 0;

  constructor(component: string, runtime: SimRuntime) {
    super(component);
    this.#runtime = runtime;
  }

  override slow(delayMs: number): void {
    this.#simDelayMs = delayMs;
  }

  override get delayMs(): number {
    return this.#simDelayMs;
  }

  override reset(): void {
    super.reset();
    this.#simDelayMs = 0;
  }

  override async check(operation: string): Promise<void> {
    if (this.#simDelayMs > 0) await this.#runtime.sleep(this.#simDelayMs);
    return super.check(operation);
  }

  override async checkBackground(operation: string): Promise<void> {
    if (this.#simDelayMs > 0) await this.#runtime.sleep(this.#simDelayMs);
    return super.checkBackground(operation);
  }
}

/**
 * The shared backends of the fleet: the fakes themselves (fakes/), each with a SimTrouble, and the bus
 * waiting on simulated time. One set per run, as one database, one Redis and one NATS serve every replica.
 */
export function createSimBackends(runtime: SimRuntime, options: { cacheTtlMs: number; logger: Logger; seed: number }) {
  class SimStore extends MemoryStore {
    override readonly trouble = new SimTrouble('database', runtime);
  }
  class SimCache extends MemoryOrderCache {
    override readonly trouble = new SimTrouble('cache', runtime);
  }
  class SimBus extends MemoryEventBus {
    override readonly trouble = new SimTrouble('publisher', runtime);
  }
  // Each fake draws its delivery shapes from the run's seed (fakes/README.md): seeded interleaving of the
  // store's operations, cache evictions, the broker's batches, redeliveries and partial acknowledgements.
  const store = new SimStore({ seed: options.seed * 4 + 1 });
  const cache = new SimCache({ clock: runtime.time, ttlMs: options.cacheTtlMs, seed: options.seed * 4 + 2 });
  const bus = new SimBus({ logger: options.logger, timers: runtime.time, seed: options.seed * 4 + 3 });
  return { store, cache, bus };
}

export type SimBackends = ReturnType<typeof createSimBackends>;
export type SimTarget = 'database' | 'cache' | 'publisher';

export function troubleOf(backends: SimBackends, target: SimTarget): SimTrouble {
  return (
    target === 'database' ? backends.store.trouble : target === 'cache' ? backends.cache.trouble : backends.bus.trouble
  ) as SimTrouble;
}
