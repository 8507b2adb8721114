import { setTimeout as sleep } from 'node:timers/promises';
import { ErrUnavailable } from '../src/domain/errors.ts';

/**
 * Lets a test drive an outage through the real service: a fake consults its Trouble before every
 * operation and health check. Down stays down until up(); failNext fails exactly the next N calls.
 */
export class Trouble {
  readonly #component: string;
  #down: string | undefined;
  #delayMs = 0;
  #failures: string[] = [];

  constructor(component: string) {
    this.#component = component;
  }

  down(reason = 'connection refused'): void {
    this.#down = reason;
  }

  up(): void {
    this.#down = undefined;
  }

  /** Back to normal: up, no delay, no queued failures. */
  reset(): void {
    this.#down = undefined;
    this.#delayMs = 0;
    this.#failures = [];
  }

  slow(delayMs: number): void {
    this.#delayMs = delayMs;
  }

  failNext(count = 1, reason = 'injected failure'): void {
    for (let i = 0; i < count; i++) this.#failures.push(reason);
  }

  get isDown(): boolean {
    return this.#down !== undefined;
  }

  /** The delay added before each operation (slow). */
  get delayMs(): number {
    return this.#delayMs;
  }

  /** Failures still queued by failNext. */
  get queuedFailures(): number {
    return this.#failures.length;
  }

  /** Drops the failures failNext queued and not yet used. */
  clearFailures(): void {
    this.#failures = [];
  }

  /** Awaited by fakes before each operation. */
  async check(operation: string): Promise<void> {
    if (this.#delayMs > 0) await sleep(this.#delayMs);
    if (this.#down !== undefined) throw new ErrUnavailable(`${this.#component}: ${operation}: ${this.#down}`);
    const failure = this.#failures.shift();
    if (failure !== undefined) throw new ErrUnavailable(`${this.#component}: ${operation}: ${failure}`);
  }

  /**
   * For background work (the outbox relay's rounds and samples): sees down and slow, but never
   * consumes failNext, which belongs to the request a test drives.
   */
  async checkBackground(operation: string): Promise<void> {
    if (this.#delayMs > 0) await sleep(this.#delayMs);
    if (this.#down !== undefined) throw new ErrUnavailable(`${this.#component}: ${operation}: ${this.#down}`);
  }

  /** Health does not consume failNext: only a down component is unhealthy. */
  async health(): Promise<void> {
    if (this.#down !== undefined) throw new ErrUnavailable(`${this.#component}: ${this.#down}`);
  }
}
