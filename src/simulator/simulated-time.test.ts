import { describe, expect, it } from 'vitest';
import { until } from '../../test/support/eventually.ts';
import { SimulatedTime } from './simulated-time.ts';

describe('simulated time (rule SIM-clock-advance)', () => {
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
});
