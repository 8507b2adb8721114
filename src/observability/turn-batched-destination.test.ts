import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { turnBatched } from './turn-batched-destination.ts';

describe('turnBatched: the log lines of one event-loop turn leave in one write', () => {
  it('[LOG-turn-batched] holds the lines of a turn and writes them once, in order, at its end; flush writes at once', async () => {
    const writes: string[] = [];
    const inner = { write: (text: string) => writes.push(text), flush: () => undefined, flushSync: () => undefined };
    const destination = turnBatched(inner);
    destination.write('a\n');
    destination.write('b\n');
    destination.write('c\n');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\nc\n']);
    destination.write('d\n');
    (destination as unknown as { flush(): void }).flush();
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
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
});
