import type { DestinationStream } from 'pino';

/** What pino.destination() returns (a sonic-boom), as far as this wrapper uses it. */
interface Inner {
  write(text: string): unknown;
  flush(callback?: (error?: Error) => void): void;
  flushSync(): void;
}

/**
 * Log lines written during one event-loop turn reach the destination as one write, at the end of the
 * turn (setImmediate), like the responses of that turn (transports/http/turn-end-response.ts). An
 * asynchronous sonic-boom otherwise hands every line written while idle to the thread pool on its own,
 * which was ~17% of a cache-hit GET's CPU (bench/profile.ts; issue 16, measured A/B with bench/ab.ts).
 * Lines keep their order. At exit, what is held is written synchronously, so a crash loses no more
 * than it did before (nothing, short of SIGKILL).
 */
export function turnBatched(inner: Inner): DestinationStream {
  let held: string[] = [];
  const release = (): void => {
    if (held.length === 0) return;
    const text = held.length === 1 ? (held[0] as string) : held.join('');
    held = [];
    inner.write(text);
  };
  process.on('exit', () => {
    release();
    try {
      inner.flushSync();
    } catch {
      // Closed or never opened: nothing more can be written.
    }
  });
  return {
    write(line: string): void {
      if (held.length === 0) setImmediate(release);
      held.push(line);
    },
    // pino's logger.flush(): what is held goes first.
    flush(callback?: (error?: Error) => void): void {
      release();
      inner.flush(callback);
    },
  } as DestinationStream;
}
