// The process's last log lines and its count of announced events, kept for the console page (rule
// CONSOLE-feed): runMain tees stdout through the ring into it, so it holds what stdout got.
import type { DestinationStream } from 'pino';

/** Our choices (rule CONSOLE-feed): how many lines the tail keeps, and how long one may be. */
export const LOG_TAIL = { lines: 200, maxLineChars: 2_000 } as const;

/** The notifier announces an event by this log line (one per order across the fleet). */
export const ANNOUNCED_MSG = 'order placed';

export interface TailLine {
  /** 1, 2, 3, … in the order written: a reader asks for the lines after the last one it has. */
  readonly seq: number;
  /** The JSON line as it went to stdout (after pino's redaction and level filtering), cut at maxLineChars. */
  readonly text: string;
}

/** Bounded (lines × maxLineChars); the `order placed` lines are counted since start, as the ring forgets them. */
export class LogTail {
  readonly #lines: number;
  readonly #maxLineChars: number;
  readonly #kept: TailLine[] = [];
  #seq = 0;
  #announced = 0;

  constructor({ lines = LOG_TAIL.lines, maxLineChars = LOG_TAIL.maxLineChars }: { lines?: number; maxLineChars?: number } = {}) {
    this.#lines = lines;
    this.#maxLineChars = maxLineChars;
  }

  /** A destination that writes each line to `inner` and keeps it here. */
  tee(inner: DestinationStream): DestinationStream {
    const { flush } = inner as { flush?: (callback?: (error?: Error) => void) => void };
    return {
      write: (line: string): void => {
        this.record(line);
        inner.write(line);
      },
      // pino's logger.flush() reaches the stdout destination through here.
      flush: (callback?: (error?: Error) => void): void => (flush === undefined ? callback?.() : flush.call(inner, callback)),
    } as DestinationStream;
  }

  record(line: string): void {
    const text = line.endsWith('\n') ? line.slice(0, -1) : line;
    this.#kept.push({ seq: ++this.#seq, text: text.length > this.#maxLineChars ? `${text.slice(0, this.#maxLineChars)}…` : text });
    if (this.#kept.length > this.#lines) this.#kept.shift();
    // Parsed only when it may be an announcement: most lines are not.
    if (text.includes(ANNOUNCED_MSG) && messageOf(text) === ANNOUNCED_MSG) this.#announced += 1;
  }

  /** The kept lines with a seq above `after` (all kept lines for 0), oldest first. */
  after(after: number): readonly TailLine[] {
    return this.#kept.filter((line) => line.seq > after);
  }

  /** How many `order placed` lines were written since start. */
  get announced(): number {
    return this.#announced;
  }
}

/** The line's msg, of whatever type; undefined when the line is no JSON object. */
function messageOf(text: string): unknown {
  try {
    return (JSON.parse(text) as { msg?: unknown } | null)?.msg;
  } catch {
    return undefined;
  }
}
