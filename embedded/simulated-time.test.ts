// The simulated time (simulated-time.ts, rule SIM-clock-advance) pinned and in real mode on vitest's fake
// real time: advance order, reset, real firing, sleep.
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { until } from '../test/support/eventually.ts';
import { SimulatedTime } from './simulated-time.ts';

describe('simulated time (rule SIM-clock-advance)', () => {
  afterEach(() => void vi.useRealTimers());

  /** Real mode on fake real time (Date and the timer functions), so the real timers fire when the test says. */
  function realModeOnFakeTime(): SimulatedTime {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    return new SimulatedTime();
  }
  it('[SIM-clock-advance] advance fires due timers earliest first, each at its due time; the rest wait', () => {
    let base = 1_000;
    const time = new SimulatedTime({ base: () => base, realTimers: false });
    const fired: string[] = [];
    time.setTimeout(() => fired.push(`b@${time.nowMs()}`), 200);
    time.setTimeout(() => {
      fired.push(`a@${time.nowMs()}`);
      time.setTimeout(() => fired.push(`a2@${time.nowMs()}`), 50); // scheduled by a firing timer, due inside the advance
    }, 100);
    const late = time.setTimeout(() => fired.push('late'), 10_000);
    expect(time.advance(300)).toBe(3);
    expect(fired).toEqual(['a@1100', 'a2@1150', 'b@1200']);
    expect({ now: time.nowMs(), offset: time.offsetMs, pending: [...time.pending.keys()] }).toEqual({
      now: 1_300,
      offset: 300,
      pending: [late],
    });
    base = 2_000; // the base time moves on its own; the offset stays
    expect(time.now().getTime()).toBe(2_300);
    time.reset();
    expect(time.now().getTime()).toBe(2_000);
    // The pending timer kept the time it had left at reset: 10,000 - 300 advanced - 700 of base time.
    expect(time.advance(8_699)).toBe(0);
    expect(time.advance(1)).toBe(1);
  });

  it('[SIM-clock-advance] in real mode a timer also fires on real time, once, and clearTimeout cancels it', async () => {
    const time = new SimulatedTime();
    let fired = 0;
    time.setTimeout(() => (fired += 1), 5);
    time.clearTimeout(time.setTimeout(() => (fired += 100), 5));
    await until(() => fired > 0, 'the real timer');
    expect(time.advance(60_000)).toBe(0);
    expect(fired).toBe(1);
  });

  it('[SIM-clock-advance] in real mode an advance brings a timer’s real firing nearer by as much; it fires once and leaves no real timer', () => {
    const time = realModeOnFakeTime();
    let fired = 0;
    time.setTimeout(() => (fired += 1), 60_000);
    expect(time.advance(59_990)).toBe(0);
    vi.advanceTimersByTime(9);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect({ fired, pending: time.pending.size, realTimers: vi.getTimerCount() }).toEqual({ fired: 1, pending: 0, realTimers: 0 });
    vi.advanceTimersByTime(120_000); // past the time the timer was first armed for
    expect(fired).toBe(1);
  });

  it('[SIM-clock-advance] in real mode a timer keeps its real time left across a reset', () => {
    const time = realModeOnFakeTime();
    let fired = 0;
    time.setTimeout(() => (fired += 1), 10_000);
    time.advance(4_000);
    time.reset();
    vi.advanceTimersByTime(5_999);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect({ fired, realTimers: vi.getTimerCount() }).toEqual({ fired: 1, realTimers: 0 });
  });

  it('[SIM-clock-advance] pinned time arms no real timer: its timers fire only by an advance', () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const time = new SimulatedTime({ base: () => 0, realTimers: false });
    let fired = 0;
    time.setTimeout(() => (fired += 1), 10);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(fired).toBe(0);
    expect(time.advance(10)).toBe(1);
  });

  it('[SIM-clock-advance] sleep resolves when an advance reaches it, and at once (dropping its timer) when its signal aborts', async () => {
    const time = new SimulatedTime({ base: () => 0, realTimers: false });
    const woke: string[] = [];
    const controller = new AbortController();
    void time.sleep(100, controller.signal).then(() => woke.push(`slept@${time.nowMs()}`));
    void time.sleep(100).then(() => woke.push(`no signal@${time.nowMs()}`));
    void time.sleep(200, controller.signal).then(() => woke.push(`aborted@${time.nowMs()}`));
    void time.sleep(50, AbortSignal.abort()).then(() => woke.push('already aborted'));
    expect([...time.pending.values()].map((timer) => timer.ms)).toEqual([100, 100, 200]);
    time.advance(100);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1); // the fired sleep let go of the signal
    controller.abort();
    await Promise.resolve();
    expect({ woke, pending: time.pending.size }).toEqual({
      woke: ['already aborted', 'slept@100', 'no signal@100', 'aborted@100'],
      pending: 0,
    });
  });
});
