// The process's last log lines, kept for the console page (rule CONSOLE-feed).
import type { DestinationStream } from 'pino';

/** Our choices (rule CONSOLE-feed): how many lines the tail keeps, and how long one may be. */
export const LOG_TAIL = { lines: 200, maxLineChars: 2_000 } as const;

export interface TailLine {
  /** 1, 2, 3, … in the order written: a reader asks for the lines after the last one it has. */
  readonly seq: number;
  /** The JSON line as it went to stdout (after pino's redaction), cut at maxLineChars. */
  readonly text: string;
}

/**
 * The last log lines of the process, in memory and bounded (lines × maxLineChars), for the embedded
 * console page (rule CONSOLE-feed). It sees exactly what stdout sees: `tee` wraps the stdout
 * destination, so a line is recorded as written, redaction and level filtering already applied.
 * It also counts the lines of a few fixed messages (`order placed` is how the notifier announces an
 * event), since the ring forgets them.
 */
export class LogTail {
  readonly #capacity: number;
  readonly #maxLineChars: number;
  readonly #ring: TailLine[] = [];
  /** Keyed by message; looked up with whatever a line's msg is (a non-string never matches). */
  readonly #counted: Map<unknown, number>;
  #seq = 0;

  constructor(options: { readonly lines?: number; readonly maxLineChars?: number; readonly count?: readonly string[] } = {}) {
    this.#capacity = options.lines ?? LOG_TAIL.lines;
    this.#maxLineChars = options.maxLineChars ?? LOG_TAIL.maxLineChars;
    this.#counted = new Map(options.count?.map((msg) => [msg, 0]));
  }

  /** A destination that writes each line to `inner` and keeps it here. */
  tee(inner: DestinationStream): DestinationStream {
    const flushable = inner as DestinationStream & { flush?: (callback?: (error?: Error) => void) => void };
    return {
      write: (line: string): void => {
        this.record(line);
        inner.write(line);
      },
      // pino's logger.flush() reaches the stdout destination through here.
      flush: (callback?: (error?: Error) => void): void => {
        if (flushable.flush === undefined) callback?.();
        else flushable.flush(callback);
      },
    } as DestinationStream;
  }

  record(line: string): void {
    const text = line.endsWith('\n') ? line.slice(0, -1) : line;
    this.#seq += 1;
    this.#ring.push({ seq: this.#seq, text: text.length > this.#maxLineChars ? `${text.slice(0, this.#maxLineChars)}…` : text });
    if (this.#ring.length > this.#capacity) this.#ring.shift();
    // Parsed only when a counted message may be in it: most lines are not.
    if ([...this.#counted.keys()].some((msg) => text.includes(msg as string))) {
      const msg = messageOf(text);
      const count = this.#counted.get(msg);
      if (count !== undefined) this.#counted.set(msg, count + 1);
    }
  }

  /** The kept lines with a seq above `after` (all kept lines for 0), oldest first. */
  after(after: number): readonly TailLine[] {
    return this.#ring.filter((line) => line.seq > after);
  }

  /** How many lines carried `msg` since start (only for the messages given as `count`). */
  count(msg: string): number {
    return this.#counted.get(msg) ?? 0;
  }
}

/** The line's msg, of whatever type; undefined when the line is not a JSON object. */
function messageOf(text: string): unknown {
  try {
    return (JSON.parse(text) as { msg?: unknown }).msg;
  } catch {
    // Not JSON: no message.
  }
}
