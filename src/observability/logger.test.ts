import type { EventEmitter } from 'node:events';
import type { DestinationStream } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { until } from '../../test/support/eventually.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { createLogger, LOG_BATCH, stdoutDestination } from './logger.ts';
import type * as LoggerModule from './logger.ts';
import { runInRequestScope, startServerSpan } from './request-trace.ts';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

describe('createLogger (spec 4.5)', () => {
  // JSON lines of time (ISO 8601), level label and msg, and nothing else (no pid, hostname, numeric
  // level), are the one-request-log-line-per-request conformance case and the tagged LOG-json case in
  // observability-rules.test.ts.
  it('[LOG-explicit-fields] redacts secret-named top-level fields (call sites log explicit fields, never whole objects: rule LOG-explicit-fields)', () => {
    const capture = new LogCapture();
    createLogger('info', capture).info(
      { password: 'hunter2', token: 'eyJabc', authorization: 'Bearer eyJabc', JWT_SECRET: 's3cr3t' },
      'oops',
    );
    expect(capture.raw.join('\n')).not.toMatch(/hunter2|eyJabc|s3cr3t/);
    expect(capture.lines[0]).toMatchObject({ password: '[redacted]', token: '[redacted]', authorization: '[redacted]' });
  });

  it('[TRACE-log-ids] adds trace_id and span_id to every line logged in a request scope once its server span started, and nowhere else (rule TRACE-log-ids)', async () => {
    const capture = new LogCapture();
    const logger = createLogger('info', capture);
    const tracer = new BasicTracerProvider().getTracer('probe');
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    logger.info({}, 'outside');
    let later: Promise<void> | undefined;
    await runInRequestScope(async (close) => {
      logger.info({}, 'before the span');
      const span = startServerSpan(tracer, 'probe', {}, { traceparent });
      await Promise.resolve();
      logger.warn({ k: 1 }, 'inside');
      expect(span.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
      // A timer the request starts (a session's linger) keeps the async context but is not the request's work.
      later = new Promise((resolve) => setTimeout(() => resolve(logger.info({}, 'after the request')), 1));
      close();
    });
    await later;
    const [outside, before, inside, after] = capture.lines;
    expect(after).toMatchObject({ msg: 'after the request' });
    expect(after).not.toHaveProperty('trace_id');
    expect(outside).not.toHaveProperty('trace_id');
    expect(before).not.toHaveProperty('trace_id');
    expect(inside).toMatchObject({ trace_id: '0af7651916cd43dd8448eb211c80319c', k: 1 });
    expect(inside!.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(inside!.span_id).not.toBe('b7ad6b7169203331');
  });

  it('[LOG-json] time is the ISO 8601 instant of the line', () => {
    const before = Date.now();
    const capture = new LogCapture();
    createLogger('info', capture).info({}, 'now');
    const after = Date.now();
    expect(capture.lines[0]?.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(capture.lines[0]?.time as string)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(capture.lines[0]?.time as string)).toBeLessThanOrEqual(after);
  });
});

describe('the process default logger (rule LOG-default)', () => {
  // A fresh copy of the module for each test: the default is module state, set by the first createLogger.
  afterEach(() => {
    vi.restoreAllMocks();
    vi.resetModules();
  });
  async function freshModule(): Promise<typeof LoggerModule> {
    vi.resetModules();
    return import('./logger.ts');
  }

  it('[LOG-default] before any logger is built the default logs nothing', async () => {
    const { defaultLogger } = await freshModule();
    const logger = defaultLogger();
    expect(['fatal', 'error', 'warn', 'info', 'debug'].filter((level) => logger.isLevelEnabled(level))).toEqual([]);
    expect(defaultLogger()).toBe(logger);
  });

  it('[LOG-default] the last logger built is the default, and process warnings are logged through it as warn lines', async () => {
    const { createLogger, defaultLogger } = await freshModule();
    const handlers: Array<(warning: Error) => void> = [];
    // Captured, not installed: the test hands the handler a warning; Node's own printing of it is left out.
    vi.spyOn(process, 'on').mockImplementation(((event: string, handler: (warning: Error) => void) => {
      if (event === 'warning') handlers.push(handler);
      return process;
    }) as typeof process.on);
    const first = new LogCapture();
    const second = new LogCapture();
    createLogger('info', first);
    const latest = createLogger('info', second);
    expect(defaultLogger()).toBe(latest);
    expect(handlers).toHaveLength(1); // installed once, by the first logger
    const warning = new Error('something deprecated');
    warning.name = 'DeprecationWarning';
    handlers[0]!(warning);
    expect(first.lines).toEqual([]);
    expect(second.lines).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'process warning', warning: 'something deprecated', name: 'DeprecationWarning' }),
    ]);
  });
});

describe("stdoutDestination (pino's own batching, rule LOG-turn-batched)", () => {
  it('[LOG-turn-batched] holds a line past its turn, then writes it on the periodic flush, asynchronously', async () => {
    // Only the flush interval is faked: the write itself goes to the real stdout (one empty line) through the thread pool.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const destination = stdoutDestination() as DestinationStream & EventEmitter;
      const written: number[] = [];
      destination.on('write', (bytes: number) => void written.push(bytes));
      destination.write('\n');
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(written).toEqual([]); // held, below minBytes, across many turns
      vi.advanceTimersByTime(LOG_BATCH.flushEveryMs);
      expect(written).toEqual([]); // handed to an asynchronous write, not written during the flush
      await until(() => written.length > 0, 'the flushed write');
      expect(written).toEqual([1]);
    } finally {
      vi.useRealTimers();
    }
  });
});
