import type { ComponentState, ClockState, SimulatorState } from '../../embedded/simulator.ts';
import { HANG_GUARD_MS } from '../../test/support/eventually.ts';

export type SimulatedComponentName = 'database' | 'cache' | 'publisher';

/**
 * The embedded simulator's control API as a case drives it: over HTTP on the admin
 * listener, the same for an in-process target, a spawned executable and an external instance.
 */
export class SimulatorClient {
  readonly #base: string;

  constructor(adminUrl: string) {
    this.#base = `${adminUrl}/simulator`;
  }

  /** Whether the admin listener offers the simulator (only an `--embedded` service does). */
  static async offeredBy(adminUrl: string): Promise<boolean> {
    const response = await fetch(`${adminUrl}/simulator`, { signal: AbortSignal.timeout(HANG_GUARD_MS) }).catch(() => undefined);
    await response?.body?.cancel();
    return response?.status === 200;
  }

  state(): Promise<SimulatorState> {
    return this.#send('GET', '');
  }

  set(
    component: SimulatedComponentName,
    change: { state?: 'up' | 'down'; latencyMs?: number; failNext?: number },
  ): Promise<ComponentState> {
    return this.#send('PUT', `/components/${component}`, change);
  }

  advance(ms: number): Promise<ClockState> {
    return this.#send('POST', '/clock/advance', { ms });
  }

  reset(): Promise<SimulatorState> {
    return this.#send('POST', '/reset');
  }

  async #send<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.#base}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(HANG_GUARD_MS),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`simulator: ${method} /simulator${path} answered ${response.status} ${text}`);
    return JSON.parse(text) as T;
  }
}
