import { describe, expect, it, vi } from 'vitest';
import { batchedDestination, type BatchInner } from './batched-stdout.ts';

function recorder(): { writes: string[]; inner: BatchInner } {
  const writes: string[] = [];
  return { writes, inner: { write: (text: string) => void writes.push(text), flush: () => undefined, flushSync: () => undefined, fd: 1 } };
}

describe('batchedDestination (the speed ring stdout): lines leave in batches, in order', () => {
  it('[LOG-turn-batched] holds lines until the delay has passed, then writes them once, in order; flush writes at once', async () => {
    // Fake timeouts (setImmediate stays real): a stalled machine cannot fire the delay early or late.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { writes, inner } = recorder();
      const destination = batchedDestination(inner, { flushEveryMs: 20, minBytes: 1024 });
      destination.write('a\n');
      destination.write('b\n');
      await new Promise((resolve) => setImmediate(resolve));
      destination.write('c\n');
      expect(writes).toEqual([]); // not at the end of the turn
      vi.advanceTimersByTime(19);
      expect(writes).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(writes).toEqual(['a\nb\nc\n']);
      destination.write('d\n');
      (destination as unknown as { flush(): void }).flush();
      expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('[LOG-turn-batched] writes at once when minBytes are held, so a burst never waits for the timer nor grows without bound', () => {
    const { writes, inner } = recorder();
    const destination = batchedDestination(inner, { flushEveryMs: 60_000, minBytes: 10 });
    destination.write('12345\n');
    expect(writes).toEqual([]);
    destination.write('67890\n');
    expect(writes).toEqual(['12345\n67890\n']);
    destination.write('x\n');
    expect(writes).toHaveLength(1);
  });

  it('[LOG-turn-batched] a batch written for its size cancels the pending delay: the next line waits its own full delay', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { writes, inner } = recorder();
      const destination = batchedDestination(inner, { flushEveryMs: 20, minBytes: 10 });
      destination.write('ab\n'); // the delay starts: due at 20
      vi.advanceTimersByTime(15);
      destination.write('cdefghi\n'); // 10 bytes held: written now
      expect(writes).toEqual(['ab\ncdefghi\n']);
      destination.write('x\n'); // a new delay: due at 35, not at the old 20
      vi.advanceTimersByTime(19);
      expect(writes).toEqual(['ab\ncdefghi\n']);
      vi.advanceTimersByTime(1);
      expect(writes).toEqual(['ab\ncdefghi\n', 'x\n']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('[LOG-turn-batched] a flush with nothing held writes nothing', () => {
    const { writes, inner } = recorder();
    const destination = batchedDestination(inner, { flushEveryMs: 60_000, minBytes: 1024 });
    (destination as unknown as { flush(): void }).flush();
    destination.write('a\n');
    (destination as unknown as { flush(): void }).flush();
    (destination as unknown as { flush(): void }).flush();
    expect(writes).toEqual(['a\n']);
  });
});
