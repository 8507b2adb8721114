// Heap cost of live sessions at the cap (spec 8: 50,000). Run with --expose-gc by bench/run.ts; prints
// one JSON line. Two states are measured on a fresh SessionScope each:
// - lingering: acquired, 10 views recorded, released: the state of every session whose user is
//   between requests (all but the few in flight), linger timer included;
// - held: acquired and not released, each with its own request done-signal (AbortController) as a
//   request in flight holds it.
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { sessionKeyFromVerifiedSubject } from '../src/domain/session-key.ts';
import { SESSION_CAP, SessionScope } from '../src/session/scope.ts';

const RECENT = 10;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

/**
 * A flat 36-character id. randomUUID() builds its result by concatenation, i.e. a tree of V8 cons
 * strings several times the size of the flat string a request's URL or token yields; measuring with
 * those would charge the session for randomUUID's representation.
 */
function flatId(): string {
  return Buffer.from(randomUUID(), 'latin1').toString('latin1');
}

function settledHeap(): number {
  for (let i = 0; i < 4; i++) gc?.();
  return process.memoryUsage().heapUsed;
}

function fill(scope: SessionScope, hold: boolean, keep: unknown[]): void {
  for (let i = 0; i < SESSION_CAP; i++) {
    const request = new AbortController();
    const lease = scope.acquire({ sessionKey: sessionKeyFromVerifiedSubject(flatId()), signal: request.signal });
    // Fresh strings, as ids parsed from each request's URL are.
    for (let v = 0; v < RECENT; v++) lease.session.recordView(flatId());
    if (hold) keep.push(lease, request);
    else lease();
  }
}

function measure(hold: boolean): { bytesPerSession: number; totalBytes: number; capRefused: boolean } {
  const logger = pino({ enabled: false });
  const keep: unknown[] = [];
  const before = settledHeap();
  const scope = new SessionScope({ recentCapacity: RECENT, logger });
  fill(scope, hold, keep);
  const after = settledHeap();
  let capRefused = false;
  try {
    scope.acquire({ sessionKey: sessionKeyFromVerifiedSubject(randomUUID()), signal: new AbortController().signal });
  } catch {
    capRefused = true;
  }
  void scope.stop();
  keep.length = 0;
  return { bytesPerSession: (after - before) / SESSION_CAP, totalBytes: after - before, capRefused };
}

/** What this script prints (bench/run.ts reads it). */
export type SessionHeap = {
  readonly cap: number;
  readonly recent: number;
  readonly lingering: ReturnType<typeof measure>;
  readonly held: ReturnType<typeof measure>;
};

const lingering = measure(false);
const held = measure(true);
process.stdout.write(`${JSON.stringify({ cap: SESSION_CAP, recent: RECENT, lingering, held })}\n`);
