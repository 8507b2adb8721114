import { Prng } from './prng.ts';

/**
 * A run's schedule, drawn from the seed before anything executes: steps are plain data naming users
 * and replicas by index, so the shrinker can drop any of them and replay the rest. What a step means
 * at run time (which order "the user's third order" is) is resolved against what happened so far.
 */
export type FaultTarget = 'database' | 'cache' | 'publisher';

export type Step =
  | { readonly op: 'login'; readonly user: number; readonly replica: number; readonly wrongPassword: boolean }
  | { readonly op: 'login-burst'; readonly user: number; readonly replica: number; readonly count: number }
  /** `retries`: how often the client sends it again at once after a 500, a refusal or its own timeout. */
  | {
      readonly op: 'create';
      readonly user: number;
      readonly replica: number;
      readonly quantity: number;
      readonly keyed: boolean;
      readonly retries: number;
    }
  | { readonly op: 'retry'; readonly user: number; readonly replica: number }
  | {
      readonly op: 'get';
      readonly user: number;
      readonly replica: number;
      readonly target: 'own' | 'other' | 'missing' | 'malformed';
      readonly pick: number;
    }
  | { readonly op: 'list'; readonly user: number; readonly replica: number; readonly limit: string | null; readonly offset: string | null }
  | { readonly op: 'recent'; readonly user: number; readonly replica: number }
  | { readonly op: 'burst'; readonly user: number; readonly replica: number; readonly count: number }
  /** One relay round, watched for `waitMs` of simulated time (it goes on in flight after that). */
  | { readonly op: 'relay'; readonly replica: number; readonly waitMs: number }
  | { readonly op: 'fault'; readonly target: FaultTarget; readonly mode: 'down' | 'slow' | 'fail-next'; readonly amount: number }
  | { readonly op: 'heal'; readonly target: FaultTarget }
  | { readonly op: 'lost-ack'; readonly replica: number }
  | { readonly op: 'kill'; readonly replica: number }
  | { readonly op: 'restart'; readonly replica: number }
  | { readonly op: 'stop'; readonly replica: number }
  | { readonly op: 'jump'; readonly ms: number; readonly across: string }
  | { readonly op: 'health'; readonly replica: number }
  | { readonly op: 'purge' };

export interface WorkloadShape {
  readonly steps: number;
  readonly replicas: number;
  readonly users: number;
}

/** The clock jumps a run draws: small ones, and each lifetime the service keeps, crossed. */
export const JUMPS: readonly (readonly [string, number, number])[] = [
  ['tick', 50, 2_000],
  ['near cache', 30_000, 31_000],
  ['linger', 5 * 60_000, 5 * 60_000 + 1_000],
  ['cache ttl', 5 * 60_000 + 1_000, 6 * 60_000],
  ['token expiry', 60 * 60_000, 61 * 60_000],
  ['idempotency key', 24 * 60 * 60_000, 24 * 60 * 60_000 + 60_000],
];

const LIMITS: readonly (string | null)[] = [null, '1', '2', '5', '20', '100', '101', '0', '-3', 'abc'];
const OFFSETS: readonly (string | null)[] = [null, '0', '1', '3', '50', '-1', 'x'];

export function generateSchedule(seed: number, shape: WorkloadShape): Step[] {
  const rng = new Prng(seed, 1);
  const steps: Step[] = [];
  // What the generator believes, so it draws sensible steps (a restart for a replica that is down, no
  // graceful stop while the database or broker is down); the run itself never relies on it.
  const up = Array.from({ length: shape.replicas }, () => true);
  const down = new Set<FaultTarget>();
  const user = (): number => rng.int(shape.users);
  const upReplica = (): number => {
    const live = up.flatMap((u, i) => (u ? [i] : []));
    return live.length > 0 && rng.chance(0.95) ? rng.pick(live) : rng.int(shape.replicas);
  };
  for (let i = 0; i < shape.steps; i++) {
    const kind = rng.weighted<Step['op']>([
      [10, 'login'],
      [1, 'login-burst'],
      [20, 'create'],
      [5, 'retry'],
      [18, 'get'],
      [7, 'list'],
      [7, 'recent'],
      [2, 'burst'],
      [12, 'relay'],
      [5, 'fault'],
      [5, 'heal'],
      [2, 'lost-ack'],
      [1, 'kill'],
      [up.includes(false) ? 4 : 0, 'restart'],
      [down.has('database') || down.has('publisher') ? 0 : 1, 'stop'],
      [5, 'jump'],
      [3, 'health'],
      [1, 'purge'],
    ]);
    switch (kind) {
      case 'login':
        steps.push({ op: kind, user: user(), replica: upReplica(), wrongPassword: rng.chance(0.1) });
        break;
      case 'login-burst':
        steps.push({ op: kind, user: user(), replica: upReplica(), count: rng.between(2, 6) });
        break;
      case 'create':
        steps.push({
          op: kind,
          user: user(),
          replica: upReplica(),
          quantity: rng.chance(0.05) ? 0 : rng.between(1, 9),
          keyed: rng.chance(0.6),
          retries: rng.pick([0, 0, 1, 2]),
        });
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
        });
        break;
      case 'list':
        steps.push({ op: kind, user: user(), replica: upReplica(), limit: rng.pick(LIMITS), offset: rng.pick(OFFSETS) });
        break;
      case 'burst':
        steps.push({ op: kind, user: user(), replica: upReplica(), count: rng.between(4, 12) });
        break;
      case 'relay':
        steps.push({ op: kind, replica: upReplica(), waitMs: rng.pick([0, 100, 1_000, 30_000]) });
        break;
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
      case 'jump': {
        const [across, lo, hi] = rng.weighted(JUMPS.map((jump, at) => [at === 0 ? 12 : 2, jump] as const));
        steps.push({ op: kind, ms: rng.between(lo, hi), across });
        break;
      }
      case 'purge':
        steps.push({ op: kind });
        break;
    }
  }
  return steps;
}

/** One line per step, for the trace and the shrunk report. */
export function describeStep(step: Step): string {
  const { op, ...rest } = step;
  return `${op} ${Object.entries(rest)
    .map(([k, v]) => `${k}=${v === null ? '-' : String(v)}`)
    .join(' ')}`.trim();
}
