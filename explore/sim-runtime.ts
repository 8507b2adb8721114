import { SimulatedTime } from '../embedded/simulated-time.ts';

/** Where simulated time starts: a fixed instant, so dates in the trace do not depend on the machine. */
export const SIM_EPOCH_MS = Date.UTC(2030, 0, 1);

const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The explorer's scheduler: one simulated clock for the whole fleet (the simulator's SimulatedTime in
 * pinned mode: nothing fires unless the explorer moves it) and a FIFO lane for the few steps that
 * leave the event loop (scrypt and HMAC run on libuv's thread pool and finish in whatever order the
 * machine likes). Work on the lane runs one at a time in the order it asked, so the continuations that
 * follow it, and every id drawn after it, come in the same order on every run of a seed.
 */
export class SimRuntime {
  readonly time = new SimulatedTime({ base: () => SIM_EPOCH_MS, realTimers: false });
  #lane: Promise<unknown> = Promise.resolve();
  #busy = 0;

  nowMs(): number {
    return this.time.nowMs();
  }

  /** A promise that resolves once simulated time has moved `ms` forward. */
  sleep(ms: number): Promise<void> {
    return this.time.sleep(ms);
  }

  /** Runs `work` (something that leaves the event loop) alone, after every lane work asked for before it. */
  serial<T>(work: () => Promise<T>): Promise<T> {
    this.#busy += 1;
    const run = this.#lane.then(work);
    this.#lane = run.then(
      () => void (this.#busy -= 1),
      () => void (this.#busy -= 1),
    );
    return run;
  }

  /**
   * Lets everything that can run without time passing run: every queued continuation, and lane work
   * with what it unblocks, until nothing is left but simulated timers (or real waits the caller owns).
   */
  async settle(): Promise<void> {
    for (;;) {
      await immediate();
      if (this.#busy === 0) {
        await immediate();
        if (this.#busy === 0) return;
      }
      await this.#lane;
    }
  }

  /** Due time of the next simulated timer, if any. */
  nextTimerAt(): number | undefined {
    let next: number | undefined;
    for (const timer of this.time.pending.values()) if (next === undefined || timer.at < next) next = timer.at;
    return next;
  }

  /** Moves simulated time to `at` (fires every timer due by then, earliest first) and settles. */
  async advanceTo(at: number): Promise<void> {
    this.time.advance(Math.max(0, at - this.nowMs()));
    await this.settle();
  }

  /**
   * Runs the simulation until `done()` holds or simulated time reaches `deadline`: timer by timer, so
   * everything in flight sees the moments it waited for. Returns whether `done()` held.
   */
  async runUntil(done: () => boolean, deadline: number): Promise<boolean> {
    await this.settle();
    for (let guard = 0; !done(); guard++) {
      const next = this.nextTimerAt();
      if (next === undefined || next > deadline) {
        if (deadline > this.nowMs()) await this.advanceTo(deadline);
        return done();
      }
      if (guard > 1_000_000) throw new Error('explore: the simulation does not converge');
      await this.advanceTo(Math.max(next, this.nowMs()));
    }
    return true;
  }

  /** A clock jump: simulated time moves `ms` at once, firing what falls due on the way (the simulator's advance). */
  async jump(ms: number): Promise<void> {
    this.time.advance(ms);
    await this.settle();
  }
}
