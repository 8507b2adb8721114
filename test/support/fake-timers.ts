import { SimulatedTime } from '../../embedded/simulated-time.ts';

/** A timer port whose time moves only when the test says so: the simulator's time, pinned at 0. */
export class FakeTimers extends SimulatedTime {
  constructor() {
    super({ base: () => 0, realTimers: false });
  }
}
