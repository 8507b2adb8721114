// GET /console/state: counts, requests over time, clock distances and log lines, read-only (rule CONSOLE-feed).
import type { Registry } from 'prom-client';
import type { LogTail, TailLine } from './log-tail.ts';
import type { SimulatedTime } from '../simulated-time.ts';

/** Our choices (rule CONSOLE-feed): the request window and the chart's resolution. */
export const CONSOLE_WINDOW_MS = 60_000;
export const CONSOLE_SAMPLE_MS = 1_000;

/** gRPC codes counted as errors: the server-side failures (what an outage or a bug gives), as HTTP 5xx. */
const GRPC_SERVER_ERRORS = new Set(['Unknown', 'DeadlineExceeded', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss']);

/** The notifier announces an event by this log line (one per order across the fleet). */
export const ANNOUNCED_MSG = 'order placed';

export interface ConsoleSources {
  /** The service's own registry: the numbers the console shows are the ones /metrics shows. */
  readonly registry: Registry;
  /** The simulated time: its pending timers are the session scope's linger timers (the ring's timers). */
  readonly time: SimulatedTime;
  /** The last log lines; absent when the process logs elsewhere (an in-process test's own logger). */
  readonly logTail: LogTail | undefined;
  readonly tokenExpiryMs: number;
  readonly cacheTtlMs: number;
  /** Real time, for the request samples (the simulated clock moves in jumps; requests do not). */
  readonly realNow?: () => number;
}

/** One point of the chart: requests and errors answered during the `ms` before `at` (real time). */
export interface ConsolePoint {
  readonly at: number;
  readonly ms: number;
  readonly requests: number;
  readonly errors: number;
}

export interface ConsoleSnapshot {
  readonly counts: {
    readonly sessionsLive: number;
    readonly sessionsLingering: number;
    /** -1 until the relay's first sample, as orders_outbox_pending_events. */
    readonly outboxPending: number;
    readonly eventsPublished: number;
    readonly eventsAnnounced: number | null;
  };
  /**
   * Answers by status (HTTP `200`…, gRPC `grpc OK`…) over the last `windowMs`: a minute (plus at most a
   * sample) while the page polls; shorter just after start, longer when nobody looked for a while.
   */
  readonly requests: { readonly windowMs: number; readonly byStatus: Readonly<Record<string, number>> };
  readonly series: readonly ConsolePoint[];
  /** How far each clock button moves the clock; nextLingerMs is null when no session lingers. */
  readonly advance: { readonly nextLingerMs: number | null; readonly tokenExpiryMs: number; readonly cacheTtlMs: number };
  /** Lines after the reader's last one; null when there is no log tail. */
  readonly log: { readonly lines: readonly TailLine[]; readonly last: number } | null;
}

interface Sample {
  readonly at: number;
  /** Cumulative answers by status key since start. */
  readonly byStatus: ReadonlyMap<string, number>;
}

/**
 * The read-only side of the embedded console page (rule CONSOLE-feed): what the page shows besides
 * GET /simulator and GET /healthz, read from the metrics registry, the simulated time and the log tail.
 * It changes nothing. Requests over time come from samples of the request counters taken when the page
 * asks (at most one per CONSOLE_SAMPLE_MS, kept for CONSOLE_WINDOW_MS plus the one before, so at most
 * ~62 are held): no timer runs, and nothing is sampled while nobody looks.
 */
export class ConsoleFeed {
  readonly #sources: ConsoleSources;
  readonly #realNow: () => number;
  #samples: Sample[] = [];

  constructor(sources: ConsoleSources) {
    this.#sources = sources;
    this.#realNow = sources.realNow ?? Date.now;
    // Built with the service, before its first request: the first look sees every answer since start.
    this.#samples.push({ at: this.#realNow(), byStatus: new Map() });
  }

  async snapshot(logAfter: number): Promise<ConsoleSnapshot> {
    const [sessions, pending, published, http, grpc] = await Promise.all(
      [
        'orders_sessions',
        'orders_outbox_pending_events',
        'orders_outbox_published_total',
        'orders_http_requests_total',
        'grpc_server_handled_total',
      ].map((name) => this.#values(name)),
    );
    const current: Sample = { at: this.#realNow(), byStatus: answersByStatus(http ?? [], grpc ?? []) };
    this.#sample(current);
    // The oldest sample kept: about a minute back while the page polls, further after nobody looked.
    const base = this.#samples[0] as Sample;
    const tail = this.#sources.logTail;
    return {
      counts: {
        sessionsLive: valueOf(sessions, { state: 'live' }),
        sessionsLingering: valueOf(sessions, { state: 'lingering' }),
        outboxPending: valueOf(pending, {}),
        eventsPublished: valueOf(published, {}),
        eventsAnnounced: tail === undefined ? null : tail.count(ANNOUNCED_MSG),
      },
      requests: { windowMs: current.at - base.at, byStatus: Object.fromEntries(difference(current.byStatus, base.byStatus)) },
      series: this.#series(),
      advance: { nextLingerMs: this.#nextTimerMs(), tokenExpiryMs: this.#sources.tokenExpiryMs, cacheTtlMs: this.#sources.cacheTtlMs },
      log: tail === undefined ? null : linesAfter(tail, logAfter),
    };
  }

  async #values(name: string): Promise<readonly MetricValue[] | undefined> {
    const metric = this.#sources.registry.getSingleMetric(name);
    return metric === undefined ? undefined : ((await metric.get()).values as readonly MetricValue[]);
  }

  /** Keeps `current` if the last kept sample is at least CONSOLE_SAMPLE_MS old; drops what left the window. */
  #sample(current: Sample): void {
    // Never empty: the constructor keeps the first sample, and the loop below always leaves one.
    const last = this.#samples.at(-1) as Sample;
    if (current.at - last.at >= CONSOLE_SAMPLE_MS) this.#samples.push(current);
    // One sample older than the window stays: the base the window's first point is measured from.
    while (this.#samples.length > 1 && (this.#samples[1] as Sample).at <= current.at - CONSOLE_WINDOW_MS) this.#samples.shift();
  }

  #series(): ConsolePoint[] {
    return this.#samples.slice(1).map((sample, index) => {
      const before = this.#samples[index] as Sample;
      let requests = 0;
      let errors = 0;
      for (const [status, count] of difference(sample.byStatus, before.byStatus)) {
        requests += count;
        if (isError(status)) errors += count;
      }
      return { at: sample.at, ms: sample.at - before.at, requests, errors };
    });
  }

  /** Until the earliest pending timer on the simulated time (a session's linger), or null. */
  #nextTimerMs(): number | null {
    const now = this.#sources.time.nowMs();
    let next: number | undefined;
    for (const timer of this.#sources.time.pending.values()) if (next === undefined || timer.at < next) next = timer.at;
    return next === undefined ? null : Math.max(1, Math.ceil(next - now));
  }
}

interface MetricValue {
  readonly value: number;
  readonly labels: Readonly<Record<string, string | number | undefined>>;
}

function linesAfter(tail: LogTail, after: number): NonNullable<ConsoleSnapshot['log']> {
  const lines = tail.after(after);
  return { lines, last: lines.at(-1)?.seq ?? after };
}

function valueOf(values: readonly MetricValue[] | undefined, labels: Readonly<Record<string, string>>): number {
  const match = values?.find((v) => Object.entries(labels).every(([key, value]) => v.labels[key] === value));
  return match?.value ?? 0;
}

function answersByStatus(http: readonly MetricValue[], grpc: readonly MetricValue[]): Map<string, number> {
  const totals = new Map<string, number>();
  const add = (key: string, value: number): void => void totals.set(key, (totals.get(key) ?? 0) + value);
  for (const v of http) add(String(v.labels['status']), v.value);
  for (const v of grpc) add(`grpc ${String(v.labels['grpc_code'])}`, v.value);
  return totals;
}

function difference(now: ReadonlyMap<string, number>, before: ReadonlyMap<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [key, value] of now) {
    const grown = value - (before.get(key) ?? 0);
    if (grown > 0) delta.set(key, grown);
  }
  return delta;
}

/** HTTP 5xx and the gRPC server-error codes. */
export function isError(status: string): boolean {
  return status.startsWith('grpc ') ? GRPC_SERVER_ERRORS.has(status.slice(5)) : Number(status) >= 500;
}
