/** The date and new identifiers as ports, so tests and the simulator can pin them (rule SIM-clock-advance). */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

export type IdGenerator = () => string;
