/**
 * The invariants the explorer holds every run to, by their rule ids in spec/rules.yaml (EXPLORE-*).
 * Checked during the run (each answer, each health probe, each admission) and after it (every fault
 * healed, every replica back, time let pass past every lifetime).
 */
export const INVARIANTS = {
  answers: 'EXPLORE-answers',
  readable: 'EXPLORE-created-readable',
  noPhantom: 'EXPLORE-no-phantom',
  keyOnce: 'EXPLORE-key-once',
  announced: 'EXPLORE-announced',
  list: 'EXPLORE-list',
  get: 'EXPLORE-get-owner',
  recent: 'EXPLORE-recent',
  sessions: 'EXPLORE-session-flush',
  retention: 'EXPLORE-session-retention',
  rate: 'EXPLORE-rate',
  loginGate: 'EXPLORE-login-gate',
  health: 'EXPLORE-health',
} as const;

export type InvariantId = (typeof INVARIANTS)[keyof typeof INVARIANTS];

export class Violation extends Error {
  readonly invariant: InvariantId;
  /** Index of the step during which it was seen; undefined when found by the checks after the run. */
  step: number | undefined;

  constructor(invariant: InvariantId, detail: string) {
    super(`${invariant}: ${detail}`);
    this.invariant = invariant;
  }
}

/** Counts what was checked, and throws the first violation. */
export class Checks {
  count = 0;

  hold(condition: boolean, invariant: InvariantId, detail: () => string): void {
    this.count += 1;
    if (!condition) throw new Violation(invariant, detail());
  }
}
