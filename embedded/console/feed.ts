// GET /console/state: what the console page shows besides GET /simulator and GET /healthz, read from the
// metrics registry, the simulated time and the log tail; it changes nothing (rule CONSOLE-feed).
import type { Registry } from 'prom-client';
import type { LogTail } from './log-tail.ts';
import type { SimulatedTime } from '../simulated-time.ts';

/** Our choices (rule CONSOLE-feed): the request window and the chart's resolution. */
export const CONSOLE_WINDOW_MS = 60_000;
export const CONSOLE_SAMPLE_MS = 1_000;

/** gRPC codes counted as errors: the server-side failures (what an outage or a bug gives), as HTTP 5xx. */
const GRPC_SERVER_ERRORS = new Set(['Unknown', 'DeadlineExceeded', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss']);

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

/** The request counters at real time `at`: cumulative answers by status (`200`, `grpc OK`) since start. */
type Sample = { readonly at: number; readonly byStatus: ReadonlyMap<string, number> };
type MetricValues = readonly { readonly value: number; readonly labels: Readonly<Record<string, string | number | undefined>> }[];

/**
 * Requests over time come from samples of the request counters taken when the page asks: at most one per
 * CONSOLE_SAMPLE_MS, kept for CONSOLE_WINDOW_MS plus the one before (the window's base, so at most ~62).
 * No timer runs and nothing is sampled while nobody looks: the window is a minute while the page polls,
 * and reaches back to the start or the last look otherwise.
 */
export class ConsoleFeed {
  readonly #sources: ConsoleSources;
  readonly #realNow: () => number;
  readonly #samples: Sample[];

  constructor(sources: ConsoleSources) {
    this.#sources = sources;
    this.#realNow = sources.realNow ?? Date.now;
    // Built with the service, before its first request: the first look sees every answer since start.
    this.#samples = [{ at: this.#realNow(), byStatus: new Map() }];
  }

  /** What /console/state answers, with the log lines after seq `logAfter`. */
  async snapshot(logAfter: number) {
    const { registry, logTail, time, tokenExpiryMs, cacheTtlMs } = this.#sources;
    const read = async (name: string): Promise<MetricValues> => (await registry.getSingleMetric(name)?.get())?.values ?? [];
    const [sessions, pending, published, http, grpc] = await Promise.all([
      read('orders_sessions'),
      read('orders_outbox_pending_events'),
      read('orders_outbox_published_total'),
      read('orders_http_requests_total'),
      read('grpc_server_handled_total'),
    ]);
    const current: Sample = { at: this.#realNow(), byStatus: answersByStatus(http, grpc) };
    this.#keep(current);
    const base = this.#samples[0] as Sample;
    const lines = logTail?.after(logAfter);
    return {
      counts: {
        sessionsLive: valueOf(sessions, 'live'),
        sessionsLingering: valueOf(sessions, 'lingering'),
        // -1 until the relay's first sample, as orders_outbox_pending_events.
        outboxPending: valueOf(pending),
        eventsPublished: valueOf(published),
        eventsAnnounced: logTail?.announced ?? null,
      },
      // Answers by status between the base and now: the window the page's heading names.
      requests: { windowMs: current.at - base.at, byStatus: Object.fromEntries(grown(current, base)) },
      // One point per kept sample: requests and errors answered during the `ms` before `at` (real time).
      series: this.#samples.slice(1).map((sample, index) => {
        const before = this.#samples[index] as Sample;
        const answers = [...grown(sample, before)];
        const total = (counted: typeof answers) => counted.reduce((sum, [, count]) => sum + count, 0);
        return {
          at: sample.at,
          ms: sample.at - before.at,
          requests: total(answers),
          errors: total(answers.filter(([status]) => isError(status))),
        };
      }),
      // How far each clock button moves; nextLingerMs is the earliest pending timer (a session's linger), or null.
      advance: { nextLingerMs: untilNextTimer(time), tokenExpiryMs, cacheTtlMs },
      log: lines === undefined ? null : { lines, last: lines.at(-1)?.seq ?? logAfter },
    };
  }

  /** Keeps `current` if the last kept sample is at least CONSOLE_SAMPLE_MS old; drops what left the window. */
  #keep(current: Sample): void {
    if (current.at - (this.#samples.at(-1) as Sample).at >= CONSOLE_SAMPLE_MS) this.#samples.push(current);
    // One sample older than the window stays: the base the window's first point is measured from.
    while (this.#samples.length > 1 && (this.#samples[1] as Sample).at <= current.at - CONSOLE_WINDOW_MS) this.#samples.shift();
  }
}

/** HTTP 5xx and the gRPC server-error codes. */
export function isError(status: string): boolean {
  return status.startsWith('grpc ') ? GRPC_SERVER_ERRORS.has(status.slice(5)) : Number(status) >= 500;
}

function valueOf(values: MetricValues, state?: string): number {
  return values.find((v) => state === undefined || v.labels['state'] === state)?.value ?? 0;
}

function answersByStatus(http: MetricValues, grpc: MetricValues): Map<string, number> {
  const totals = new Map<string, number>();
  const add = (key: string, value: number): void => void totals.set(key, (totals.get(key) ?? 0) + value);
  for (const v of http) add(String(v.labels['status']), v.value);
  for (const v of grpc) add(`grpc ${String(v.labels['grpc_code'])}`, v.value);
  return totals;
}

/** What grew from `before` to `now`, by status. */
function grown(now: Sample, before: Sample): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [key, value] of now.byStatus)
    if (value > (before.byStatus.get(key) ?? 0)) delta.set(key, value - (before.byStatus.get(key) ?? 0));
  return delta;
}

function untilNextTimer(time: SimulatedTime): number | null {
  const next = Math.min(...[...time.pending.values()].map((timer) => timer.at));
  return next === Infinity ? null : Math.max(1, Math.ceil(next - time.nowMs()));
}
