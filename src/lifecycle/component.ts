/**
 * A long-lived part of the process (spec 3.4, rules LIFE-*): the runner calls init in dependency order, run
 * concurrently on the run signal, and stop in reverse order once every run has returned. Every method is
 * optional. A port: the core may implement it (dependency-cruiser allows this one file).
 */
export interface Component {
  readonly name: string;
  /** Connects during start-up, with no retry; a rejection aborts start-up (rule LIFE-2-init-connect). */
  init?(): Promise<void>;
  /** Long-running work. Resolves when the signal aborts; rejects only on a real failure. */
  run?(signal: AbortSignal): Promise<void>;
  stop?(): Promise<void>;
  /** Resolves when healthy; rejects with an error whose message is safe to show (no secrets). */
  health?(): Promise<void>;
  /** Resolves when ready to take traffic; same contract as health. */
  ready?(): Promise<void>;
}
