// The console's read-only feed (feed.ts, rule CONSOLE-feed) on a registry, a pinned simulated time and a
// real time the test moves: counts, the request window and its samples, the clock distances, the log lines.
import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LogTail } from './log-tail.ts';
import { HttpMetrics, registerOutboxMetrics, registerServiceMetrics } from '../../src/observability/metrics.ts';
import { GrpcServerMetrics } from '../../src/observability/grpc-metrics.ts';
import { CONSOLE_SAMPLE_MS, CONSOLE_WINDOW_MS, ConsoleFeed, isError } from './feed.ts';
import { SimulatedTime } from '../simulated-time.ts';

function setUp() {
  let real = 1_000_000;
  const metrics = new HttpMetrics();
  const sessions = { live: 2, lingering: 1 };
  registerServiceMetrics(metrics.registry, { counts: () => sessions }, undefined);
  const outbox = { pending: 4 as number | undefined, oldestAgeSeconds: 0, published: 9, publishFailures: 0 };
  registerOutboxMetrics(metrics.registry, { stats: () => outbox });
  const grpc = new GrpcServerMetrics(metrics.registry);
  const time = new SimulatedTime({ base: () => 0, realTimers: false });
  const logTail = new LogTail();
  const feed = new ConsoleFeed({
    registry: metrics.registry,
    time,
    logTail,
    tokenExpiryMs: 3_600_000,
    cacheTtlMs: 300_000,
    realNow: () => real,
  });
  const answer = (status: number, times = 1): void => {
    for (let i = 0; i < times; i++) metrics.observe('GET', 'GET /orders', status, 0.001);
  };
  return { feed, time, logTail, grpc, answer, sessions, outbox, wait: (ms: number) => void (real += ms) };
}

describe('console feed', () => {
  it('[CONSOLE-feed] reads sessions, outbox and announced events from the registry and the log tail', async () => {
    const { feed, logTail, sessions, outbox } = setUp();
    logTail.record('{"level":"info","msg":"order placed"}\n');
    expect((await feed.snapshot(0)).counts).toEqual({
      sessionsLive: 2,
      sessionsLingering: 1,
      outboxPending: 4,
      eventsPublished: 9,
      eventsAnnounced: 1,
    });
    sessions.lingering = 0;
    outbox.pending = undefined;
    expect((await feed.snapshot(0)).counts).toMatchObject({ sessionsLingering: 0, outboxPending: -1 });
  });

  it('[CONSOLE-feed] counts answers by status since start, then over the last minute while polled, and charts requests and errors per sample', async () => {
    const { feed, grpc, answer, wait } = setUp();
    answer(200, 3);
    answer(503);
    grpc.handled({ grpc_type: 'unary', grpc_service: 'ordersv1.Orders', grpc_method: 'GetOrder' }, 14, 0.001);
    wait(5_000);
    const first = await feed.snapshot(0);
    expect(first.requests).toEqual({ windowMs: 5_000, byStatus: { '200': 3, '503': 1, 'grpc Unavailable': 1 } });
    expect(first.series).toEqual([{ at: 1_005_000, ms: 5_000, requests: 5, errors: 2 }]);

    // Polled every second for two minutes, one 404 a second: the window holds about a minute of them.
    for (let second = 0; second < 120; second++) {
      wait(CONSOLE_SAMPLE_MS);
      answer(404);
      await feed.snapshot(0);
    }
    const polled = await feed.snapshot(0);
    expect(polled.requests.windowMs).toBe(CONSOLE_WINDOW_MS);
    expect(polled.requests.byStatus).toEqual({ '404': 60 });
    expect(polled.series).toHaveLength(CONSOLE_WINDOW_MS / CONSOLE_SAMPLE_MS);
    expect(polled.series.every((point) => point.requests === 1 && point.errors === 0 && point.ms === CONSOLE_SAMPLE_MS)).toBe(true);

    // Asked again within the same second: no new sample is kept.
    wait(CONSOLE_SAMPLE_MS / 2);
    answer(500);
    const soon = await feed.snapshot(0);
    expect(soon.series).toHaveLength(polled.series.length);
    expect(soon.requests.byStatus['500']).toBe(1);
  });

  it('[CONSOLE-feed] tells the clock buttons how far the next linger timer, the token lifetime and the cache TTL are', async () => {
    const { feed, time } = setUp();
    expect((await feed.snapshot(0)).advance).toEqual({ nextLingerMs: null, tokenExpiryMs: 3_600_000, cacheTtlMs: 300_000 });
    time.setTimeout(() => undefined, 300_000);
    time.setTimeout(() => undefined, 200_000);
    time.advance(50_000);
    expect((await feed.snapshot(0)).advance.nextLingerMs).toBe(150_000);
    time.setTimeout(() => undefined, 400_000); // set last, due last: the earliest still counts
    expect((await feed.snapshot(0)).advance.nextLingerMs).toBe(150_000);
  });

  it('[CONSOLE-feed] hands out the log lines after the reader’s last one', async () => {
    const { feed, logTail } = setUp();
    expect((await feed.snapshot(0)).log).toEqual({ lines: [], last: 0 });
    logTail.record('{"msg":"one"}\n');
    logTail.record('{"msg":"two"}\n');
    const all = await feed.snapshot(0);
    expect(all.log).toEqual({
      lines: [
        { seq: 1, text: '{"msg":"one"}' },
        { seq: 2, text: '{"msg":"two"}' },
      ],
      last: 2,
    });
    expect((await feed.snapshot(2)).log).toEqual({ lines: [], last: 2 });
    logTail.record('{"msg":"three"}\n');
    expect((await feed.snapshot(0)).log?.last).toBe(3);
    expect((await feed.snapshot(1)).log).toEqual({
      lines: [
        { seq: 2, text: '{"msg":"two"}' },
        { seq: 3, text: '{"msg":"three"}' },
      ],
      last: 3,
    });
  });

  it('[CONSOLE-feed] without a log tail there is no log and no announced count; a metric the registry lacks reads as none', async () => {
    let real = 0;
    const feed = new ConsoleFeed({
      registry: new Registry(),
      time: new SimulatedTime({ base: () => 0, realTimers: false }),
      logTail: undefined,
      tokenExpiryMs: 1,
      cacheTtlMs: 1,
      realNow: () => real,
    });
    real += 2_000;
    expect(await feed.snapshot(0)).toMatchObject({
      counts: { sessionsLive: 0, sessionsLingering: 0, outboxPending: 0, eventsPublished: 0, eventsAnnounced: null },
      requests: { windowMs: 2_000, byStatus: {} },
      series: [{ at: 2_000, ms: 2_000, requests: 0, errors: 0 }],
      log: null,
    });
  });

  it('[CONSOLE-feed] reads each session count by its state label, whatever order the registry lists them in', async () => {
    const registry = new Registry();
    new Gauge({
      name: 'orders_sessions',
      help: 'sessions by state',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        this.set({ state: 'lingering' }, 3);
        this.set({ state: 'live' }, 5);
      },
    });
    const time = new SimulatedTime({ base: () => 0, realTimers: false });
    const feed = new ConsoleFeed({ registry, time, logTail: undefined, tokenExpiryMs: 1, cacheTtlMs: 1, realNow: () => 0 });
    expect((await feed.snapshot(0)).counts).toMatchObject({ sessionsLive: 5, sessionsLingering: 3 });
  });

  it('counts HTTP 5xx and the gRPC server-error codes as errors, nothing else', () => {
    const serverErrors = [
      '500',
      '503',
      'grpc Unknown',
      'grpc DeadlineExceeded',
      'grpc Unimplemented',
      'grpc Internal',
      'grpc Unavailable',
      'grpc DataLoss',
    ];
    expect(serverErrors.filter((status) => !isError(status))).toEqual([]);
    expect(['200', '404', '429', 'grpc OK', 'grpc NotFound', 'grpc Unauthenticated', 'grpc ResourceExhausted'].some(isError)).toBe(false);
  });
});
