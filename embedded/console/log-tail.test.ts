// The log tail (log-tail.ts, rule CONSOLE-feed) behind a real pino logger: what it keeps, how it cuts,
// what it counts, and that it passes writes and flushes on to stdout.
import type { DestinationStream } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.ts';
import { LogTail } from './log-tail.ts';

function sink(): DestinationStream & { readonly written: string[] } {
  const written: string[] = [];
  return { written, write: (line: string) => void written.push(line) } as DestinationStream & { readonly written: string[] };
}

describe('log tail', () => {
  it('[CONSOLE-feed] keeps the last lines as written to stdout, bounded in count and length, numbered for readers', () => {
    const inner = sink();
    const tail = new LogTail({ lines: 3, maxLineChars: 80 });
    const logger = createLogger('info', tail.tee(inner));
    for (let i = 1; i <= 5; i++) logger.info({ i }, 'line');
    logger.debug('below the level: neither written nor kept');
    logger.info({ password: 'hunter2-secret' }, 'x'.repeat(100));

    expect(inner.written).toHaveLength(6);
    const kept = tail.after(0);
    expect(kept.map((line) => line.seq)).toEqual([4, 5, 6]);
    // What stdout got, newline dropped, cut at 80 characters.
    expect(kept[0]?.text).toBe(inner.written[3]?.trimEnd());
    expect(kept[2]?.text).toHaveLength(81);
    expect(kept[2]?.text.endsWith('…')).toBe(true);
    expect(tail.after(5).map((line) => line.seq)).toEqual([6]);
    expect(tail.after(6)).toEqual([]);
  });

  it('[CONSOLE-feed] sees lines after redaction, and counts the `order placed` lines (events announced)', () => {
    const tail = new LogTail();
    const logger = createLogger('info', tail.tee(sink()));
    logger.info({ order_id: 'a' }, 'order placed');
    logger.info({ item: 'order placed' }, 'request');
    logger.info({ order_id: 'b' }, 'order placed');
    logger.info({ password: 'hunter2-secret' }, 'login');
    expect(tail.announced).toBe(2);
    expect(
      tail
        .after(0)
        .map((line) => line.text)
        .join('\n'),
    ).not.toContain('hunter2-secret');
    expect(tail.after(0).at(-1)?.text).toContain('"password":"[redacted]"');
  });

  it('[CONSOLE-feed] a line of exactly maxLineChars is kept whole; a line recorded without its newline keeps its last character', () => {
    const tail = new LogTail({ maxLineChars: 10 });
    tail.record('0123456789\n');
    tail.record('0123456789');
    tail.record('0123456789x');
    expect(tail.after(0).map((line) => line.text)).toEqual(['0123456789', '0123456789', '0123456789…']);
  });

  it('[CONSOLE-feed] a tail of 0 lines keeps none, and still counts what it forgets', () => {
    const tail = new LogTail({ lines: 0 });
    const logger = createLogger('info', tail.tee(sink()));
    logger.info('order placed');
    expect(tail.after(0)).toEqual([]);
    expect(tail.announced).toBe(1);
  });

  it('[CONSOLE-feed] counts only lines whose msg is `order placed`: not a field, not a line that is no JSON, not another type', () => {
    const tail = new LogTail();
    const logger = createLogger('info', tail.tee(sink()));
    logger.info('order placed');
    logger.info({ note: 'order placed' }, 'order cancelled');
    logger.info('order placed twice');
    tail.record('order placed, not JSON\n');
    tail.record('null order placed\n');
    tail.record('null\n');
    tail.record('{"msg":["order placed"]}\n');
    expect(tail.announced).toBe(1);
  });

  it('[CONSOLE-feed] hands flush on to the destination it tees, and answers it itself when that has none', () => {
    const flushed: string[] = [];
    const inner = Object.assign(sink(), { flush: (callback?: () => void) => (flushed.push('inner'), callback?.()) });
    const flush = (destination: DestinationStream, callback: () => void): void =>
      (new LogTail().tee(destination) as DestinationStream & { flush(callback: () => void): void }).flush(callback);
    flush(inner, () => flushed.push('done'));
    flush(sink(), () => flushed.push('no flush of its own'));
    expect(flushed).toEqual(['inner', 'done', 'no flush of its own']);
  });
});
