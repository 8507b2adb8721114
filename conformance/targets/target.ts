import { randomBytes } from 'node:crypto';
import type { Env } from '../../src/config/env.ts';
import type { PlatformTimeouts } from '../../src/transports/http/server/timeouts.ts';
import { startInProcess, type BackendKind, type InProcessApp } from '../../test/support/in-process-app.ts';
import type { LogLine } from '../../test/support/log-capture.ts';
import { spawnBin } from '../../test/support/spawn-bin.ts';
import type { Transport, RestVariant } from '../../test/support/transports.ts';
import { SimulatorClient } from './simulator-client.ts';

/** `spawned`: the transport's executable run with --embedded, black-box. */
export type BackendName = BackendKind | 'spawned' | 'external';

/**
 * What a case may need beyond the public and admin listeners. An in-process target has all of them;
 * an external instance has none, so cases needing one are skipped there (and listed).
 */
export type Capability =
  /** Hooks into the running app (components, config, server objects). */
  | 'inProcess'
  /** Fresh users created on demand; without it cases share the provided accounts. */
  | 'users'
  | 'logs'
  | 'spans'
  /** The embedded simulator on the admin listener: fault switches and the clock (--embedded only). */
  | 'faults'
  /** The fakes' recorders (published events, cache contents): an in-process fake target only. */
  | 'recorders'
  /** Settings the executable does not read from its environment: session linger and cap (spec 8 constants). */
  | 'constants'
  /** The signing secret, to mint expired tokens. */
  | 'secret'
  /** Per-case settings: session cap, linger, rate limit, JWT_EXPIRY, SESSION_RECENT. */
  | 'settings'
  /** The admin listener's address. */
  | 'admin';

/** Settings a case may ask for; such a case gets its own target. */
export interface TargetSettings {
  readonly env?: Env;
  readonly sessionLingerMs?: number;
  readonly sessionCap?: number;
  /** A target of its own even without other settings (the case changes the app it runs on). */
  readonly isolated?: boolean;
  /** Shorter timeouts that Node's servers enforce, set in composition (in-process targets only). */
  readonly platformTimeouts?: PlatformTimeouts;
  /** The speed ring on (speed/README.md), as the executables run; in-process targets are the plain core otherwise. */
  readonly speed?: boolean;
}

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

export interface Target {
  readonly transport: string;
  readonly backend: BackendName;
  readonly baseUrl: string;
  readonly adminUrl: string | undefined;
  readonly capabilities: ReadonlySet<Capability>;
  readonly hooks?: InProcessApp | undefined;
  /** The simulator's control API (capability faults). */
  readonly simulator?: SimulatorClient | undefined;
  /** The service's log lines, parsed and as written (capability logs). */
  readonly logs?: { readonly lines: readonly LogLine[]; readonly raw: readonly string[] } | undefined;
  /** The signing secret (capability secret). */
  readonly jwtSecret?: string | undefined;
  /** A user for this case: fresh (in-process) or the index-th provided account (external). */
  newUser(label: string, index: number): Promise<Credentials>;
  stop(): Promise<void>;
}

const ALL_IN_PROCESS: readonly Capability[] = ['inProcess', 'users', 'logs', 'spans', 'secret', 'settings', 'constants', 'admin'];
/** An in-process fake target also has the simulator (it runs embedded) and the fakes' recorders. */
const FAKE_ONLY: readonly Capability[] = ['faults', 'recorders'];
/** A spawned `--embedded` executable: what its admin listener, its output and its environment offer. */
const SPAWNED: readonly Capability[] = ['logs', 'secret', 'settings', 'admin', 'faults'];

/** Why a black-box target (spawned or external) lacks a capability: the report's note on each skip. */
export const BLACK_BOX_LACKS: Readonly<Record<Capability, string>> = {
  inProcess: 'reaches into the running app (stored rows, injected bugs, server objects), which no API exposes',
  users: 'needs fresh users with no earlier orders or views; --embedded has two fixed demo accounts (and no sign-up, spec 1)',
  logs: 'reads the service log, which an external instance does not share',
  spans: 'reads finished spans from an in-memory exporter; a process exports spans only to OTLP_ENDPOINT',
  faults: 'needs the simulator, which only an --embedded instance offers on its admin listener',
  recorders: "reads the fakes' recorders (published events, cache contents), which no API exposes",
  constants:
    'needs a session linger or cap other than the fixed constants (spec 8); linger-follows-the-simulated-clock checks the 5-minute linger black-box',
  secret: 'mints tokens with the signing secret, which an external instance does not share',
  settings: 'needs its own instance with other environment settings',
  admin: 'needs the admin listener (--admin-url)',
};

export function capabilitiesOf(backend: BackendName): ReadonlySet<Capability> {
  if (backend === 'spawned') return new Set(SPAWNED);
  if (backend === 'external') return new Set();
  return new Set(backend === 'fake' ? [...ALL_IN_PROCESS, ...FAKE_ONLY] : ALL_IN_PROCESS);
}
let userCounter = 0;

export async function startInProcessTarget(transport: Transport, backend: BackendKind, settings: TargetSettings = {}): Promise<Target> {
  const app = await startInProcess({
    transport: transport.factory,
    backend,
    serviceName: `orders-${transport.name}`,
    env: settings.env,
    sessionLingerMs: settings.sessionLingerMs,
    sessionCap: settings.sessionCap,
    platformTimeouts: settings.platformTimeouts,
    // A case's own setting wins; otherwise `npm run conformance -- --speed on` runs every target with the ring.
    speed: settings.speed ?? process.env['CONFORMANCE_SPEED'] === 'on',
  });
  const runId = randomBytes(3).toString('hex');
  return {
    transport: transport.name,
    backend,
    baseUrl: app.baseUrl,
    adminUrl: app.adminUrl,
    capabilities: capabilitiesOf(backend),
    hooks: app,
    simulator: backend === 'fake' ? new SimulatorClient(app.adminUrl) : undefined,
    logs: app.logs,
    jwtSecret: app.jwtSecret,
    async newUser(label) {
      userCounter += 1;
      const username = `${label}-${runId}-${userCounter}`;
      const password = await app.addUser(username, `${username}-pw-${randomBytes(4).toString('hex')}`);
      return { username, password };
    },
    stop: () => app.stop(),
  };
}

export interface ExternalOptions {
  readonly url: string;
  readonly adminUrl: string | undefined;
  /** Accounts that exist on the instance (`name:password`); the embedded demo users by default. */
  readonly users: readonly Credentials[];
  /** Which REST variant the instance is (spec 2.1 / 4.1 rule 9); unknown skips the cases that differ. */
  readonly restVariant?: RestVariant | undefined;
}

export const DEMO_ACCOUNTS: readonly Credentials[] = [
  { username: 'alice', password: 'alice-password' },
  { username: 'bob', password: 'bob-password' },
];

/** A black-box target's users are its given accounts, by index. */
function account(accounts: readonly Credentials[], index: number, missing: string): Credentials {
  const found = accounts[index];
  if (found === undefined) throw new Error(missing);
  return found;
}

/**
 * A running instance by URL: black-box only. Nothing to start or stop. `simulated`: its admin listener
 * offers the simulator (probed once by the matrix), so fault and clock cases run through it.
 */
export function externalTarget(options: ExternalOptions, simulated = false): Target {
  const adminUrl = options.adminUrl?.replace(/\/$/, '');
  const capabilities: Capability[] = adminUrl === undefined ? [] : simulated ? ['admin', 'faults'] : ['admin'];
  return {
    transport: 'external',
    backend: 'external',
    baseUrl: options.url.replace(/\/$/, ''),
    adminUrl,
    capabilities: new Set(capabilities),
    simulator: adminUrl !== undefined && simulated ? new SimulatorClient(adminUrl) : undefined,
    newUser: async (label, index) =>
      account(
        options.users,
        index,
        `external target: case needs user #${index + 1} (${label}) but only ${options.users.length} accounts were given (--user name:password)`,
      ),
    async stop() {},
  };
}

/**
 * The transport's executable, spawned with --embedded and only its environment as settings: a black-box
 * target whose faults and clock move through the simulator, whose logs are its stdout, and whose users
 * are the two demo accounts.
 */
export async function startSpawnedTarget(transport: Transport, settings: TargetSettings = {}): Promise<Target> {
  const jwtSecret = randomBytes(32).toString('base64url');
  const env = {
    HTTP_ADDR: '127.0.0.1:0',
    ADMIN_ADDR: '127.0.0.1:0',
    JWT_SECRET: jwtSecret,
    RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'debug',
    ...settings.env,
  } as Record<string, string>;
  const bin = spawnBin(transport.bin, ['--embedded'], env);
  try {
    const address = async (msg: string): Promise<string> =>
      `http://${String((await bin.waitForLine((l) => l['msg'] === msg, msg))['addr'])}`;
    const [baseUrl, adminUrl] = [await address('api: listening'), await address('admin: listening')];
    await bin.waitReady(adminUrl);
    return {
      transport: transport.name,
      backend: 'spawned',
      baseUrl,
      adminUrl,
      capabilities: capabilitiesOf('spawned'),
      simulator: new SimulatorClient(adminUrl),
      logs: {
        get lines() {
          return bin.lines as unknown as LogLine[];
        },
        get raw() {
          return bin.rawLines();
        },
      },
      jwtSecret,
      newUser: async (label, index) =>
        account(
          DEMO_ACCOUNTS,
          index,
          `spawned target: case needs user #${index + 1} (${label}) but --embedded has ${DEMO_ACCOUNTS.length} demo accounts`,
        ),
      async stop() {
        await bin.stop();
      },
    };
  } catch (error) {
    bin.kill();
    throw error;
  }
}
