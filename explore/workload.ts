import { Prng } from './prng.ts';
import {
  CACHE_TTL_MS,
  IDEMPOTENCY_KEY_TTL_MS,
  NEAR_CACHE_TTL_MS,
  RATE_PER_SECOND,
  SESSION_LINGER_MS,
  TOKEN_LIFETIME_MS,
} from './spec-constants.ts';

/**
 * A run's schedule, drawn from the seed before anything executes: steps are plain data naming users
 * and replicas by index, so the shrinker can drop any of them and replay the rest. What a step means
 * at run time (which order "the user's third order" is, when "just before the token expires" is) is
 * resolved against what happened so far.
 */
export type FaultTarget = 'database' | 'cache' | 'publisher';

/** How a request reaches a replica (rule LIMIT-rate-trust-proxy): the rate limiter keys on the answer. */
export type Route = 'direct' | 'direct-spoof' | 'proxy' | 'proxy-spoof' | 'proxy-garbled' | 'socket-gone';

/** Who a login claims to be: the user, with a wrong password, an unknown name, an empty one, or a user whose stored hash is unreadable. */
export type LoginAs = 'right' | 'wrong' | 'unknown' | 'empty' | 'legacy';

/** The lifetimes the service keeps, by name: each is a window a schedule works inside and a boundary it lands on. */
export type Window = 'linger' | 'token' | 'key' | 'cache' | 'near-cache' | 'rate';

export type SpreadAction = 'get' | 'recent' | 'list' | 'retry' | 'reuse';

/** A token a client made up or broke: each must be refused with 401 and its spec 5 message. */
export type Forgery = 'garbage' | 'padded' | 'wrong-secret' | 'no-name' | 'too-long' | 'future' | 'empty' | 'basic';

export type Step =
  | { readonly op: 'login'; readonly user: number; readonly replica: number; readonly as: LoginAs; readonly route: Route }
  | { readonly op: 'login-burst'; readonly user: number; readonly replica: number; readonly count: number }
  /** Logins of one user from several addresses at once (an office behind NAT, a stuffing attack): the gate's fairness. */
  | { readonly op: 'login-storm'; readonly replica: number; readonly perClient: readonly number[] }
  /**
   * A client that goes away while its request waits: `count` logins sent at once and the last
   * `abandon` of them given up after `afterMs` (queued behind the others), or one create, get or list
   * given up `afterMs` into a slow database.
   */
  | {
      readonly op: 'abandon';
      readonly user: number;
      readonly replica: number;
      readonly what: 'login' | 'create' | 'get' | 'list';
      readonly count: number;
      readonly abandon: number;
      readonly afterMs: number;
    }
  /** `retries`: how often the client sends it again at once after a 500, a refusal or its own timeout. */
  | {
      readonly op: 'create';
      readonly user: number;
      readonly replica: number;
      readonly quantity: number;
      readonly keyed: boolean;
      readonly retries: number;
      /** A double submit: the same request to two replicas at the same moment (keyed only). */
      readonly twice: boolean;
    }
  | { readonly op: 'create-many'; readonly user: number; readonly replica: number; readonly count: number }
  | { readonly op: 'retry'; readonly user: number; readonly replica: number }
  /** The key of the user's latest keyed create sent again with another item or quantity (IDEM-mismatch: 422) or the same body. */
  | { readonly op: 'reuse'; readonly user: number; readonly replica: number; readonly change: 'item' | 'quantity' | 'none' }
  | {
      readonly op: 'get';
      readonly user: number;
      readonly replica: number;
      readonly target: 'own' | 'other' | 'missing' | 'malformed';
      readonly pick: number;
      readonly route: Route;
    }
  | { readonly op: 'list'; readonly user: number; readonly replica: number; readonly limit: string | null; readonly offset: string | null }
  | { readonly op: 'recent'; readonly user: number; readonly replica: number }
  | { readonly op: 'burst'; readonly user: number; readonly replica: number; readonly count: number; readonly route: Route }
  | { readonly op: 'forged'; readonly user: number; readonly replica: number; readonly kind: Forgery }
  /** Requests of one user spread inside a window: before each, time moves `gaps[i]` ms in pieces. */
  | {
      readonly op: 'spread';
      readonly user: number;
      readonly replica: number;
      readonly window: Window;
      readonly gaps: readonly number[];
      readonly actions: readonly SpreadAction[];
    }
  /** Time moves `ms` timer by timer: everything in flight, every loop and linger sees each moment. */
  | { readonly op: 'wait'; readonly ms: number }
  /**
   * Time moves to `deltaMs` from the end of a window of `user` (negative: just before it; 0: on it),
   * then the request that window decides is sent: the boundary is resolved against the run so far.
   */
  | { readonly op: 'boundary'; readonly window: Window; readonly user: number; readonly replica: number; readonly deltaMs: number }
  | { readonly op: 'fault'; readonly target: FaultTarget; readonly mode: 'down' | 'slow' | 'fail-next'; readonly amount: number }
  | { readonly op: 'heal'; readonly target: FaultTarget }
  | { readonly op: 'lost-ack'; readonly replica: number }
  | { readonly op: 'kill'; readonly replica: number }
  | { readonly op: 'restart'; readonly replica: number }
  | { readonly op: 'stop'; readonly replica: number }
  | { readonly op: 'jump'; readonly ms: number; readonly across: string }
  | { readonly op: 'health'; readonly replica: number }
  /** A scanner spraying requests from `count` addresses, in two halves a second apart: the limiter's memory bound. */
  | { readonly op: 'scan'; readonly replica: number; readonly count: number };

export interface WorkloadShape {
  readonly steps: number;
  readonly replicas: number;
  readonly users: number;
}

/** Each window's length on the simulated clock (explore/spec-constants.ts). */
export const WINDOW_MS: Readonly<Record<Window, number>> = {
  linger: SESSION_LINGER_MS,
  token: TOKEN_LIFETIME_MS,
  key: IDEMPOTENCY_KEY_TTL_MS,
  cache: CACHE_TTL_MS,
  'near-cache': NEAR_CACHE_TTL_MS,
  rate: 1_000 / RATE_PER_SECOND,
};
const WINDOWS = Object.keys(WINDOW_MS) as Window[];

/** The clock jumps a run draws: small ones, and each lifetime the service keeps, crossed at once. */
export const JUMPS: readonly (readonly [string, number, number])[] = [
  ['tick', 50, 2_000],
  ['near cache', NEAR_CACHE_TTL_MS, NEAR_CACHE_TTL_MS + 1_000],
  ['linger', SESSION_LINGER_MS, SESSION_LINGER_MS + 1_000],
  ['cache ttl', CACHE_TTL_MS + 1_000, CACHE_TTL_MS + 60_000],
  ['token expiry', TOKEN_LIFETIME_MS, TOKEN_LIFETIME_MS + 60_000],
  ['idempotency key', IDEMPOTENCY_KEY_TTL_MS, IDEMPOTENCY_KEY_TTL_MS + 60_000],
];

const LIMITS: readonly (string | null)[] = [null, '1', '2', '5', '20', '21', '100', '101', '150', '0', '-3', 'abc', '2.5'];
const OFFSETS: readonly (string | null)[] = [null, '0', '1', '3', '19', '20', '50', '-1', 'x'];
const FORGERIES: readonly Forgery[] = ['garbage', 'padded', 'wrong-secret', 'no-name', 'too-long', 'future', 'empty', 'basic'];
const ROUTES: readonly (readonly [number, Route])[] = [
  [6, 'direct'],
  [1, 'direct-spoof'],
  [3, 'proxy'],
  [1, 'proxy-spoof'],
  [1, 'proxy-garbled'],
  // The client hung up before its request was read: the socket no longer knows its peer.
  [1, 'socket-gone'],
];

export function generateSchedule(seed: number, shape: WorkloadShape): Step[] {
  const rng = new Prng(seed, 1);
  const steps: Step[] = [];
  // What the generator believes, so it draws sensible steps (a restart for a replica that is down, a
  // heal of what is down); the run itself never relies on it.
  const up = Array.from({ length: shape.replicas }, () => true);
  const down = new Set<FaultTarget>();
  const user = (): number => rng.int(shape.users);
  const upReplica = (): number => {
    const live = up.flatMap((u, i) => (u ? [i] : []));
    return live.length > 0 && rng.chance(0.95) ? rng.pick(live) : rng.int(shape.replicas);
  };
  const route = (): Route => rng.weighted(ROUTES);
  for (let i = 0; i < shape.steps; i++) {
    const kind = rng.weighted<Step['op']>([
      [9, 'login'],
      [1, 'login-burst'],
      [1, 'login-storm'],
      [3, 'abandon'],
      [18, 'create'],
      [2, 'create-many'],
      [4, 'retry'],
      [3, 'reuse'],
      [16, 'get'],
      [7, 'list'],
      [6, 'recent'],
      [2, 'burst'],
      [2, 'forged'],
      [5, 'spread'],
      [8, 'wait'],
      [4, 'boundary'],
      [5, 'fault'],
      [5, 'heal'],
      [2, 'lost-ack'],
      [1, 'kill'],
      [up.includes(false) ? 4 : 0, 'restart'],
      [1, 'stop'],
      [3, 'jump'],
      [3, 'health'],
      // Rare: ten thousand requests (about one run in forty has one).
      [rng.int(150) === 0 ? 3 : 0, 'scan'],
    ]);
    switch (kind) {
      case 'login':
        steps.push({
          op: kind,
          user: user(),
          replica: upReplica(),
          // An unknown or empty name costs a real scrypt at the service's full cost (the dummy hash): rare.
          as: rng.weighted([
            [400, 'right'],
            [40, 'wrong'],
            [1, 'unknown'],
            [1, 'empty'],
            [10, 'legacy'],
          ] as const),
          route: route(),
        });
        break;
      case 'login-burst':
        steps.push({ op: kind, user: user(), replica: upReplica(), count: rng.between(2, 6) });
        break;
      case 'login-storm':
        steps.push({ op: kind, replica: upReplica(), perClient: Array.from({ length: rng.between(3, 12) }, () => rng.between(1, 3)) });
        break;
      case 'abandon': {
        const what = rng.weighted([
          [3, 'login'],
          [2, 'create'],
          [1, 'get'],
          [1, 'list'],
        ] as const);
        const count = what === 'login' ? rng.between(2, 4) : 1;
        steps.push({
          op: kind,
          user: user(),
          replica: upReplica(),
          what,
          count,
          abandon: rng.between(1, count),
          afterMs: rng.pick([0, 10, 60, 120, 400]),
        });
        break;
      }
      case 'create': {
        const keyed = rng.chance(0.6);
        steps.push({
          op: kind,
          user: user(),
          replica: upReplica(),
          quantity: rng.chance(0.05) ? 0 : rng.between(1, 9),
          keyed,
          retries: rng.pick([0, 0, 1, 2]),
          twice: keyed && rng.chance(0.2),
        });
        break;
      }
      case 'create-many':
        // Enough orders that some user passes the default page (20) and pages past it are exercised.
        steps.push({ op: kind, user: user(), replica: upReplica(), count: rng.between(6, 24) });
        break;
      case 'reuse':
        steps.push({ op: kind, user: user(), replica: upReplica(), change: rng.pick(['item', 'quantity', 'quantity', 'none'] as const) });
        break;
      case 'retry':
      case 'recent':
        steps.push({ op: kind, user: user(), replica: upReplica() });
        break;
      case 'get':
        steps.push({
          op: kind,
          user: user(),
          replica: upReplica(),
          target: rng.weighted([
            [12, 'own'],
            [3, 'other'],
            [2, 'missing'],
            [2, 'malformed'],
          ] as const),
          pick: rng.int(1_000),
          route: route(),
        });
        break;
      case 'list':
        steps.push({ op: kind, user: user(), replica: upReplica(), limit: rng.pick(LIMITS), offset: rng.pick(OFFSETS) });
        break;
      case 'burst':
        steps.push({ op: kind, user: user(), replica: upReplica(), count: rng.between(4, 12), route: route() });
        break;
      case 'forged':
        steps.push({ op: kind, user: user(), replica: upReplica(), kind: rng.pick(FORGERIES) });
        break;
      case 'spread': {
        // Inside the window: the gaps add up to less than it, so every request lands within it.
        const window = rng.pick(WINDOWS);
        const length = WINDOW_MS[window];
        const count = rng.between(2, 5);
        const gaps = Array.from({ length: count }, () => Math.max(1, Math.floor((length * rng.between(5, 95)) / 100 / count)));
        const actions = Array.from({ length: count }, () =>
          rng.weighted([
            [4, 'get'],
            [3, 'recent'],
            [1, 'list'],
            [window === 'key' ? 3 : 1, 'retry'],
            [window === 'key' ? 2 : 0, 'reuse'],
          ] as const),
        );
        steps.push({ op: kind, user: user(), replica: upReplica(), window, gaps, actions });
        break;
      }
      case 'wait':
        steps.push({ op: kind, ms: rng.pick([10, 50, 120, 400, 1_000, 2_500, 11_000]) });
        break;
      case 'boundary': {
        // Just before, on, or just after the end of the window.
        const side = rng.int(3);
        const deltaMs = side === 1 ? 0 : (side === 0 ? -1 : 1) * rng.pick([1, 10, 400, 999, 1_000]);
        steps.push({ op: kind, window: rng.pick(WINDOWS), user: user(), replica: upReplica(), deltaMs });
        break;
      }
      case 'lost-ack':
      case 'health':
        steps.push({ op: kind, replica: upReplica() });
        break;
      case 'fault': {
        const target = rng.pick(['database', 'cache', 'publisher'] as const);
        const mode = rng.pick(['down', 'slow', 'fail-next'] as const);
        const amount = mode === 'slow' ? rng.pick([200, 800, 3_000]) : mode === 'fail-next' ? rng.between(1, 3) : 0;
        if (mode === 'down') down.add(target);
        steps.push({ op: kind, target, mode, amount });
        break;
      }
      case 'heal': {
        const target = down.size > 0 && rng.chance(0.7) ? rng.pick([...down]) : rng.pick(['database', 'cache', 'publisher'] as const);
        down.delete(target);
        steps.push({ op: kind, target });
        break;
      }
      case 'kill':
      case 'stop': {
        const replica = upReplica();
        up[replica] = false;
        steps.push({ op: kind, replica });
        break;
      }
      case 'restart': {
        const replica = rng.pick(up.flatMap((u, i) => (u ? [] : [i])));
        up[replica] = true;
        steps.push({ op: kind, replica });
        break;
      }
      case 'scan':
        steps.push({ op: kind, replica: upReplica(), count: 10_050 });
        break;
      case 'jump': {
        const [across, lo, hi] = rng.weighted(JUMPS.map((jump, at) => [at === 0 ? 8 : 2, jump] as const));
        steps.push({ op: kind, ms: rng.between(lo, hi), across });
        break;
      }
    }
  }
  return steps;
}

/** One line per step, for the trace and the shrunk report. */
export function describeStep(step: Step): string {
  const { op, ...rest } = step;
  return `${op} ${Object.entries(rest)
    .map(([k, v]) => `${k}=${v === null ? '-' : Array.isArray(v) ? v.join(',') : String(v)}`)
    .join(' ')}`.trim();
}
