import type { OrderPlaced } from '../../src/domain/order-placed.ts';
import { HANG_GUARD_MS } from '../../test/support/eventually.ts';
import type { Credentials } from './target.ts';

/** An order as the test-control API shows a stored row or a cache entry (embedded/control/openapi.yaml). */
export interface RecordedOrder {
  readonly id: string;
  readonly user_id: string;
  readonly item: string;
  readonly quantity: number;
  readonly status: string;
  readonly created_at: string;
}

/** Where a one-shot fault can be injected: two store reads, and the tracing layer's startSpan. */
export type FaultCall = 'findById' | 'listByUser' | 'startSpan';

/**
 * What a case reads and arms beyond the public API: fresh users' records, the fakes' recorders and a
 * one-shot handler fault. Over HTTP (ControlClient) on every `--embedded` target; through the app's
 * objects on an in-process real target (conformance/targets/target.ts).
 */
export interface TargetControl {
  /** The stored row (capability rows). */
  stored(id: string): Promise<RecordedOrder | undefined>;
  /** The live cache entry (capability rows). */
  cached(id: string): Promise<RecordedOrder | undefined>;
  /** Events the publisher accepted, oldest first (capability recorders). */
  events(filter?: { readonly orderId?: string; readonly userId?: string }): Promise<readonly OrderPlaced[]>;
  /** The next call of this store read (or of the tracer's startSpan) throws a programming error (capability handlerFault). */
  injectFault(call: FaultCall): Promise<void>;
  /** The faults armed that have not fired yet. */
  armedFaults(): Promise<readonly FaultCall[]>;
}

/**
 * The embedded test-control API as a runner drives it, over HTTP on the admin listener
 * (embedded/control/openapi.yaml): the same for an in-process fake target, a spawned executable and
 * an external `--embedded` instance.
 */
export class ControlClient implements TargetControl {
  readonly #base: string;

  constructor(adminUrl: string) {
    this.#base = `${adminUrl}/control`;
  }

  /** Whether the admin listener offers the control API (only an `--embedded` service does). */
  static async offeredBy(adminUrl: string): Promise<boolean> {
    const response = await fetch(`${adminUrl}/control/openapi.yaml`, { signal: AbortSignal.timeout(HANG_GUARD_MS) }).catch(
      () => undefined,
    );
    await response?.body?.cancel();
    return response?.status === 200;
  }

  async provisionUser(credentials: Credentials): Promise<{ id: string; username: string }> {
    return (await this.#send('POST', '/users', credentials, 201)) as { id: string; username: string };
  }

  stored(id: string): Promise<RecordedOrder | undefined> {
    return this.#record('orders', id);
  }

  cached(id: string): Promise<RecordedOrder | undefined> {
    return this.#record('cache', id);
  }

  async events(filter: { readonly orderId?: string; readonly userId?: string } = {}): Promise<readonly OrderPlaced[]> {
    const query = new URLSearchParams();
    if (filter.orderId !== undefined) query.set('order_id', filter.orderId);
    if (filter.userId !== undefined) query.set('user_id', filter.userId);
    const suffix = query.size === 0 ? '' : `?${query.toString()}`;
    return ((await this.#send('GET', `/events${suffix}`)) as { events: OrderPlaced[] }).events;
  }

  async injectFault(call: FaultCall): Promise<void> {
    await this.#send('POST', '/faults', { call });
  }

  async armedFaults(): Promise<readonly FaultCall[]> {
    return ((await this.#send('GET', '/faults')) as { armed: FaultCall[] }).armed;
  }

  async #record(kind: 'orders' | 'cache', id: string): Promise<RecordedOrder | undefined> {
    const answer = await this.#send('GET', `/${kind}/${encodeURIComponent(id)}`, undefined, 200, true);
    return answer as RecordedOrder | undefined;
  }

  async #send(method: string, path: string, body?: unknown, expected = 200, absentOk = false): Promise<unknown> {
    const response = await fetch(`${this.#base}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(HANG_GUARD_MS),
    });
    const text = await response.text();
    if (absentOk && response.status === 404) return undefined;
    if (response.status !== expected) throw new Error(`control: ${method} /control${path} answered ${response.status} ${text}`);
    return JSON.parse(text);
  }
}
