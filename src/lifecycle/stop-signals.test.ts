// The stop-signal policy of rule LIFE-4-shutdown on a stand-in signal source (the real process group: test/process/stop-signal-once.test.ts).
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LogCapture } from '../../test/support/log-capture.ts';
import { createLogger } from '../observability/logger.ts';
import { handleStopSignals, type SignalSource, type StopSignal } from './stop-signals.ts';

function harness(): {
  emit: (signal: StopSignal) => void;
  stops: StopSignal[];
  exits: number[];
  logs: LogCapture;
  detach: () => void;
  source: EventEmitter;
} {
  const source = new EventEmitter();
  const logs = new LogCapture();
  const stops: StopSignal[] = [];
  const exits: number[] = [];
  const detach = handleStopSignals({
    source: source as unknown as SignalSource,
    logger: createLogger('debug', logs),
    onStop: (signal) => stops.push(signal),
    exit: (code) => exits.push(code),
  });
  return { emit: (signal) => source.emit(signal, signal), stops, exits, logs, detach, source };
}

describe('stop signals (rule LIFE-4-shutdown)', () => {
  it('the first SIGINT starts one graceful stop and exits nothing', () => {
    const h = harness();
    h.emit('SIGINT');
    expect(h.stops).toEqual(['SIGINT']);
    expect(h.exits).toEqual([]);
    expect(h.logs.find('shutting down')).toMatchObject([{ level: 'info', signal: 'SIGINT' }]);
  });

  it('a second signal during the stop (SIGTERM after SIGINT too) is logged as ignored and starts nothing', () => {
    const h = harness();
    h.emit('SIGINT');
    h.emit('SIGTERM');
    expect(h.stops).toEqual(['SIGINT']);
    expect(h.exits).toEqual([]);
    const ignored = h.logs.lines.filter((l) => l.msg.startsWith('shutdown in progress: signal ignored'));
    expect(ignored).toMatchObject([{ level: 'warn', signal: 'SIGTERM' }]);
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('a third %s exits at once with %i, once; a fourth changes nothing', (signal, code) => {
    const h = harness();
    h.emit('SIGTERM');
    h.emit('SIGINT');
    h.emit(signal);
    expect(h.exits).toEqual([code]);
    expect(h.logs.lines.at(-1)).toMatchObject({
      level: 'error',
      signal,
      code,
      msg: 'shutdown forced: third stop signal, exiting without waiting for the drain',
    });
    h.emit(signal);
    expect(h.exits).toEqual([code]);
    expect(h.stops).toEqual(['SIGTERM']);
  });

  it('listens to SIGINT and SIGTERM only, until detached', () => {
    const h = harness();
    expect(h.source.eventNames().sort()).toEqual(['SIGINT', 'SIGTERM']);
    h.detach();
    expect(h.source.eventNames()).toEqual([]);
  });
});
