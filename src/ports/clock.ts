/** Time and identifiers as ports, so tests can pin them. */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

export type IdGenerator = () => string;
