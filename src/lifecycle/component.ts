/**
 * A long-lived part of the process (spec 3.4). Every method is optional; the runner calls init in
 * dependency order, run concurrently on the run signal, and stop in reverse order once every run
 * has returned.
 */
export interface Component {
  readonly name: string;
  /** Connects synchronously during start-up, with no retry; a rejection aborts start-up (3.4 rule 2). */
  init?(): Promise<void>;
  /** Long-running work. Resolves when the signal aborts; rejects only on a real failure (3.4 rule 4). */
  run?(signal: AbortSignal): Promise<void>;
  stop?(): Promise<void>;
  /** Resolves when healthy; rejects with an error whose message is safe to show (no secrets). */
  health?(): Promise<void>;
  /** Resolves when ready to take traffic; same contract as health. */
  ready?(): Promise<void>;
}
