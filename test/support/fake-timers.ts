import type { TimerPort } from '../../src/session/session-scope.ts';

/** A hand-written timer port: time moves only when the test says so. */
export class FakeTimers implements TimerPort {
  now = 0;
  #nextId = 1;
  readonly pending = new Map<number, { at: number; ms: number; callback: () => void }>();

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#nextId++;
    this.pending.set(id, { at: this.now + ms, ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Fires every timer due within `ms`, earliest first, with `now` set to its due time. */
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      let next: [number, { at: number; callback: () => void }] | undefined;
      for (const entry of this.pending) if (entry[1].at <= end && (next === undefined || entry[1].at < next[1].at)) next = entry;
      if (next === undefined) break;
      this.pending.delete(next[0]);
      this.now = next[1].at;
      next[1].callback();
    }
    this.now = end;
  }
}
