import type { OrderPlaced } from '../../src/domain/order-placed.ts';
import { HANG_GUARD_MS } from '../../test/support/eventually.ts';
import type { LogLine } from '../../test/support/log-capture.ts';

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
    const response = await fetch(`${adminUrl}/control/openapi.yaml`, { signal: AbortSignal.timeout(HANG_GUARD_MS) }).catch(() => undefined);
    await response?.body?.cancel();
    return response?.status === 200;
  }

  async provisionUser(credentials: { readonly username: string; readonly password: string }): Promise<{ id: string; username: string }> {
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

  /** GET /control/logs: the lines after seq `after`; undefined when the instance's stdout is not teed. */
  async logs(after: number): Promise<{ lines: readonly string[]; next: number } | undefined> {
    return (await this.#send('GET', `/logs?after=${after}`, undefined, 200, true)) as { lines: string[]; next: number } | undefined;
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

/** How often a follower asks for new log lines: a case waiting for a line waits about this long more. */
const FOLLOW_EVERY_MS = 15;

/**
 * The service log of an instance the runner did not start, followed through GET /control/logs: the
 * lines as a case reads a spawned executable's (capability logs), kept here as they arrive.
 */
export class LogFollower {
  readonly lines: LogLine[] = [];
  readonly raw: string[] = [];
  readonly #control: ControlClient;
  #next = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(control: ControlClient) {
    this.#control = control;
  }

  /** Whether the instance serves its log (only an executable run --embedded tees stdout). */
  static async offeredBy(control: ControlClient): Promise<boolean> {
    return (await control.logs(0).catch(() => undefined)) !== undefined;
  }

  /** Starts following; resolves once the lines kept so far are read, so a case's `from` counts them. */
  start(): Promise<void> {
    const poll = async (): Promise<void> => {
      const page = await this.#control.logs(this.#next).catch(() => undefined);
      for (const text of page?.lines ?? []) {
        this.raw.push(text);
        try {
          this.lines.push(JSON.parse(text) as LogLine);
        } catch {
          this.lines.push({ level: '', time: '', msg: '<not json>', raw: text });
        }
      }
      if (page !== undefined) this.#next = page.next;
      if (!this.#stopped) this.#timer = setTimeout(() => void poll(), FOLLOW_EVERY_MS);
    };
    return poll();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}
