/**
 * The differential check's workload (test/differential/README.md): a seed's list of requests for a few users,
 * drawn so that what the backends decide shows in the answers (list order and its ties, idempotency replays
 * and mismatches, key expiry after a clock jump, cache-aside reads, values a store or a cache could change,
 * one announcement per order) and nothing decides it but the backends: every request is answered before the
 * next is sent, except groups whose answers cannot depend on their order. No faults: a real backend cannot be
 * given them on demand.
 */
import { Prng } from '../../fakes/prng.ts';

export type Target =
  | { readonly kind: 'order'; readonly index: number; readonly upper: boolean }
  | { readonly kind: 'missing' }
  | { readonly kind: 'malformed' };

export type Step =
  | { readonly op: 'login'; readonly user: number; readonly rightPassword: boolean }
  | { readonly op: 'create'; readonly user: number; readonly item: string; readonly quantity: number; readonly key?: string }
  /** Sent at once: the same body under one key (every answer carries the one order), or distinct bodies without a key. */
  | { readonly op: 'burst'; readonly user: number; readonly count: number; readonly item: string; readonly key?: string }
  | { readonly op: 'get'; readonly user: number; readonly target: Target }
  | { readonly op: 'list'; readonly user: number; readonly limit?: string; readonly offset?: string }
  | { readonly op: 'advance'; readonly ms: number }
  /** Waits until every order of the seed was announced, and answers the `order placed` lines per order. */
  | { readonly op: 'announced' };

export const USERS = 3;

/** What the stores and the cache must give back as sent: text PostgreSQL, JSON in Redis and the fakes' copies all hold. */
const ITEMS = ['widget', 'widget', 'gadget', 'ünïcödé ✓', 'emoji 🧪 and 𝄞', '  padded  ', 'x'.repeat(200), 'e\u0301 combining'] as const;
const QUANTITIES = [1, 1, 2, 3, 7, 2_147_483_647] as const;
/** Refused by the domain (400) before any backend: both runs must refuse them alike, and write nothing. */
const INVALID = [
  ['', 1],
  ['   ', 1],
  ['y'.repeat(201), 1],
  ['nul\u0000inside', 1],
  ['lone \ud800 surrogate', 1],
  ['widget', 0],
  ['widget', -1],
  ['widget', 2_147_483_648],
] as const;
const KEYS = ['k-1', '"k-2"'] as const;
const LIMITS = [undefined, '1', '2', '3', '5', '20', '100', '101', '0', '-3', 'abc'] as const;
const OFFSETS = [undefined, undefined, '0', '1', '2', '4', '1000', '-1', 'x'] as const;
/** 0 keeps the clock still (ties), 1 ms splits them, 25 h passes the idempotency keys' 24 h lifetime. */
const ADVANCES = [0, 0, 1, 1, 1, 1_000, 1_000, 60_000, 60_000, 25 * 60 * 60_000] as const;

export function generateWorkload(seed: number, length = 45): Step[] {
  const prng = new Prng(seed);
  const pick = <T>(items: readonly T[]): T => items[prng.int(items.length)] as T;
  const user = (): number => prng.int(USERS);
  const steps: Step[] = [];
  for (let u = 0; u < USERS; u++) steps.push({ op: 'login', user: u, rightPassword: true });
  let created = 0;
  while (steps.length < length) {
    const roll = prng.int(100);
    if (roll < 33) {
      const key = prng.chance(0.35) ? pick(KEYS) : undefined;
      const [item, quantity] = prng.chance(0.15) ? pick(INVALID) : [pick(ITEMS), pick(QUANTITIES)];
      steps.push({ op: 'create', user: user(), item, quantity, ...(key === undefined ? {} : { key }) });
      created += 1;
    } else if (roll < 40) {
      const key = prng.chance(0.5) ? pick(KEYS) : undefined;
      // A keyed burst is a retry storm of one request; it stands alone in time, so whichever attempt wins, no
      // other order ties with it (its id decides nothing).
      if (key !== undefined) steps.push({ op: 'advance', ms: 1 });
      steps.push({ op: 'burst', user: user(), count: 2 + prng.int(3), item: pick(ITEMS), ...(key === undefined ? {} : { key }) });
      if (key !== undefined) steps.push({ op: 'advance', ms: 1 });
      created += 1;
    } else if (roll < 58) {
      const r = prng.int(10);
      const target: Target =
        created > 0 && r < 8
          ? { kind: 'order', index: prng.int(created), upper: r === 0 }
          : r < 9
            ? { kind: 'missing' }
            : { kind: 'malformed' };
      steps.push({ op: 'get', user: user(), target });
    } else if (roll < 82) {
      const limit = pick(LIMITS);
      const offset = pick(OFFSETS);
      steps.push({ op: 'list', user: user(), ...(limit === undefined ? {} : { limit }), ...(offset === undefined ? {} : { offset }) });
    } else if (roll < 85) {
      steps.push({ op: 'login', user: user(), rightPassword: prng.chance(0.5) });
    } else if (roll < 96) {
      steps.push({ op: 'advance', ms: pick(ADVANCES) });
    } else {
      steps.push({ op: 'announced' });
    }
  }
  steps.push({ op: 'announced' });
  return steps;
}

/** One line naming a step, for the report. */
export function describeStep(step: Step): string {
  switch (step.op) {
    case 'login':
      return `login u${step.user} (${step.rightPassword ? 'right' : 'wrong'} password)`;
    case 'create':
      return `create u${step.user} ${JSON.stringify(step.item).slice(0, 40)} x${step.quantity}${step.key === undefined ? '' : ` key ${step.key}`}`;
    case 'burst':
      return `burst of ${step.count} creates u${step.user} ${JSON.stringify(step.item).slice(0, 40)}${step.key === undefined ? '' : ` key ${step.key}`}`;
    case 'get':
      return `get u${step.user} ${step.target.kind === 'order' ? `order #${step.target.index}${step.target.upper ? ' (upper case)' : ''}` : step.target.kind}`;
    case 'list':
      return `list u${step.user} limit=${step.limit ?? '-'} offset=${step.offset ?? '-'}`;
    case 'advance':
      return `advance ${step.ms} ms`;
    case 'announced':
      return 'announcements so far';
  }
}
