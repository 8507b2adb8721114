import type * as NodeFs from 'node:fs';
import { writeSync } from 'node:fs';
import type { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { until } from '../test/support/eventually.ts';
import type * as Ring from './ring.ts';
import type * as Batched from './batched-stdout.ts';
import type { BatchInner } from './batched-stdout.ts';

// The exit handler writes with fs.writeSync on the destination's descriptor: recorded here instead, so
// no test writes to a real descriptor (the worker's stdout included).
vi.mock('node:fs', async (original) => ({ ...(await original<typeof NodeFs>()), writeSync: vi.fn() }));

// The fast project shares modules between the files of a worker (isolate: false): another file may have
// loaded these already, bound to the real writeSync. Fresh copies import the mock above.
let batchedDestination: typeof Batched.batchedDestination;
let batchedStdout: typeof Batched.batchedStdout;
let speedRing: typeof Ring.speedRing;
beforeAll(async () => {
  vi.resetModules();
  ({ batchedDestination, batchedStdout } = await import('./batched-stdout.ts'));
  ({ speedRing } = await import('./ring.ts'));
});

type Event = ['flushSync'] | ['write', string] | ['writeSync', number, string];

/** An inner destination that records, in one list, what reached it and what was written to its descriptor. */
function recorder(fd: number): { events: Event[]; inner: BatchInner } {
  const events: Event[] = [];
  vi.mocked(writeSync).mockImplementation(((descriptor: number, text: string) => {
    events.push(['writeSync', descriptor, text]);
    return text.length;
  }) as typeof writeSync);
  const inner: BatchInner = {
    write: (text: string) => void events.push(['write', text]),
    flush: () => undefined,
    flushSync: () => void events.push(['flushSync']),
    fd,
  };
  return { events, inner };
}

let exitHandlers: Array<() => void> = [];
beforeEach(() => {
  exitHandlers = [];
  // Captured, not installed: the test runs the handler itself, and the worker's own exit is left alone.
  vi.spyOn(process, 'on').mockImplementation(((event: string, handler: () => void) => {
    if (event === 'exit') exitHandlers.push(handler);
    return process;
  }) as typeof process.on);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.mocked(writeSync).mockReset();
});

/** Runs the exit handler the destination installed last (pino.destination installs one of its own before). */
function exit(): void {
  expect(exitHandlers.length).toBeGreaterThan(0);
  exitHandlers.at(-1)!();
}

describe('batchedDestination at process exit: what is held is written synchronously, after what the inner stream holds', () => {
  it.each([1, 0])(
    '[LOG-turn-batched] held lines go to descriptor %i in one synchronous write, in order, after the inner flushSync',
    (fd) => {
      const { events, inner } = recorder(fd);
      const destination = batchedDestination(inner, { flushEveryMs: 60_000, minBytes: 1024 });
      destination.write('a\n');
      destination.write('b\n');
      exit();
      expect(events).toEqual([['flushSync'], ['writeSync', fd, 'a\nb\n']]);
    },
  );

  it('[LOG-turn-batched] with nothing held only the inner stream is flushed', () => {
    const { events, inner } = recorder(1);
    batchedDestination(inner, { flushEveryMs: 60_000, minBytes: 1024 });
    exit();
    expect(events).toEqual([['flushSync']]);
  });

  it('[LOG-turn-batched] lines written at exit are not written again by a later flush', () => {
    const { events, inner } = recorder(1);
    const destination = batchedDestination(inner, { flushEveryMs: 60_000, minBytes: 1024 });
    destination.write('a\n');
    exit();
    (destination as unknown as { flush(): void }).flush();
    expect(events).toEqual([['flushSync'], ['writeSync', 1, 'a\n']]);
  });

  it('[LOG-turn-batched] an inner stream that fails at exit (closed) does not throw from the exit handler', () => {
    const { events, inner } = recorder(1);
    const destination = batchedDestination(
      {
        ...inner,
        flushSync: () => {
          throw new Error('closed');
        },
      },
      { flushEveryMs: 60_000, minBytes: 1024 },
    );
    destination.write('a\n');
    expect(() => exit()).not.toThrow();
    expect(events).toEqual([]);
  });

  it('[LOG-turn-batched] batchedStdout holds lines for stdout (descriptor 1) and writes them there at exit', () => {
    const destination = batchedStdout();
    vi.mocked(writeSync).mockImplementation(((_descriptor: number, text: string) => text.length) as typeof writeSync);
    destination.write('{"msg":"held"}\n');
    exit();
    expect(vi.mocked(writeSync).mock.calls).toEqual([[1, '{"msg":"held"}\n']]);
  });

  it("[LOG-turn-batched] the ring's stdout, where the executables log, is this batched stdout", () => {
    const destination = speedRing.stdout!();
    vi.mocked(writeSync).mockImplementation(((_descriptor: number, text: string) => text.length) as typeof writeSync);
    destination.write('{"msg":"held"}\n');
    exit();
    expect(vi.mocked(writeSync).mock.calls).toEqual([[1, '{"msg":"held"}\n']]);
  });

  it('[LOG-turn-batched] batchedStdout hands each batch to an asynchronous write on stdout', async () => {
    const opened = vi.spyOn(pino, 'destination');
    const destination = batchedStdout();
    const inner = opened.mock.results[0]?.value as EventEmitter;
    const written: number[] = [];
    inner.on('write', (bytes: number) => void written.push(bytes));
    destination.write('\n'); // one empty line on the real stdout
    (destination as unknown as { flush(): void }).flush();
    expect(written).toEqual([]); // not written during the flush
    await until(() => written.length > 0, 'the batch written');
    expect(written).toEqual([1]);
  });
});
