import { spawnSync } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { batchedDestination } from './batched-destination.ts';

function recorder(): { writes: string[]; inner: { write(text: string): void; flush(): void; flushSync(): void } } {
  const writes: string[] = [];
  return { writes, inner: { write: (text: string) => void writes.push(text), flush: () => undefined, flushSync: () => undefined } };
}

describe('batchedDestination: log lines leave in batches, in order', () => {
  it('[LOG-turn-batched] holds lines until the delay has passed, then writes them once, in order; flush writes at once', async () => {
    // Fake timeouts (setImmediate stays real): a stalled machine cannot fire the delay early or late.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { writes, inner } = recorder();
      const destination = batchedDestination(inner, { maxDelayMs: 20, maxBytes: 1024 });
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

  it('[LOG-turn-batched] writes at once when maxBytes are held, so a burst never waits for the timer nor grows without bound', () => {
    const { writes, inner } = recorder();
    const destination = batchedDestination(inner, { maxDelayMs: 60_000, maxBytes: 10 });
    destination.write('12345\n');
    expect(writes).toEqual([]);
    destination.write('67890\n');
    expect(writes).toEqual(['12345\n67890\n']);
    destination.write('x\n');
    expect(writes).toHaveLength(1);
  });

  it('[LOG-turn-batched] a process that crashes right after logging still writes the line (the exit handler flushes)', () => {
    const script = [
      `const { createLogger } = await import(${JSON.stringify(new URL('./logger.ts', import.meta.url).href)});`,
      `createLogger('info').info({ n: 1 }, 'last words');`,
      `throw new Error('crash');`,
    ].join('\n');
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(child.status).not.toBe(0);
    expect(child.stdout).toContain('"msg":"last words"');
  });

  it('[LOG-turn-batched] a process that exits on its own writes what is held (the timer does not keep it alive, the exit handler writes)', () => {
    const script = [
      `const { createLogger } = await import(${JSON.stringify(new URL('./logger.ts', import.meta.url).href)});`,
      `createLogger('info').info({ n: 2 }, 'quiet exit');`,
    ].join('\n');
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(child.status).toBe(0);
    expect(child.stdout).toContain('"msg":"quiet exit"');
  });
});
