import { randomBytes } from 'node:crypto';
import type { Env } from '../../src/config/env.ts';
import { authenticate } from '../../src/service/authenticate.ts';
import type { PlatformTimeouts } from '../../src/transports/http/server/timeouts.ts';
import { startInProcess, type BackendKind, type InProcessApp } from '../../test/support/in-process-app.ts';
import type { LogLine } from '../../test/support/log-capture.ts';
import { spawnBin } from '../../test/support/spawn-bin.ts';
import type { Transport, RestVariant } from '../../test/support/transports.ts';
import { SimulatorClient } from './simulator-client.ts';
import { ControlClient, LogFollower, type FaultCall, type RecordedOrder, type TargetControl } from './control-client.ts';
import { OtlpReceiver, seenSpanOf, type SeenSpan } from './otlp-receiver.ts';

/** `spawned`: the transport's executable run with --embedded, black-box. */
export type BackendName = BackendKind | 'spawned' | 'external';

/** Spec 8's fixed constants, as a black-box run reaches them (the simulated clock, many sessions). */
export const SPEC_SESSION_LINGER_MS = 5 * 60_000;
export const SPEC_SESSION_CAP = 50_000;

/**
 * What a case may need beyond the public and admin listeners. An in-process target has nearly all of
 * them; a black-box `--embedded` target (spawned, or external with --admin-url) gets users, records and
 * faults through the test-control API (embedded/control/openapi.yaml) and spans through the runner's
 * OTLP receiver; cases needing one a target lacks are skipped there (and listed).
 */
export type Capability =
  /** Hooks into the running app (components, config, server objects). */
  | 'inProcess'
  /** Fresh users created on demand (the control API's POST /control/users black-box); without it cases share the provided accounts. */
  | 'users'
  | 'logs'
  | 'spans'
  /** The embedded simulator on the admin listener: fault switches and the clock (--embedded only). */
  | 'faults'
  /** Published events as the publisher accepted them: the fakes' recorder (the control API black-box). */
  | 'recorders'
  /** Stored rows and cache entries: the app's backends in process, the control API black-box. */
  | 'rows'
  /** A one-shot programming error in a handler's next store read: in process, or the control API. */
  | 'handlerFault'
  /** Settings the executable does not read from its environment: session linger and cap other than spec 8's constants. */
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
  /** Records and faults (capabilities rows, recorders, handlerFault). */
  readonly control?: TargetControl | undefined;
  /** Finished spans so far (capability spans): an in-memory exporter in process, the OTLP receiver black-box. */
  readonly spans?: (() => readonly SeenSpan[]) | undefined;
  /** The session linger and cap this target runs with: a case's own in process, spec 8's constants elsewhere. */
  readonly sessionLingerMs: number;
  readonly sessionCap: number;
  /** The service's log lines, parsed and as written (capability logs). */
  readonly logs?: { readonly lines: readonly LogLine[]; readonly raw: readonly string[] } | undefined;
  /** The signing secret (capability secret). */
  readonly jwtSecret?: string | undefined;
  /** An instance by URL, shared with whoever else uses it: a 429 of its rate limit is waited out and retried. */
  readonly shared?: boolean | undefined;
  /** An external target's log: starts following it (startExternalTarget). */
  readonly followLogs?: (() => Promise<void>) | undefined;
  /** A user for this case: fresh (in process, or provisioned through the control API) or the index-th provided account. */
  newUser(label: string, index: number): Promise<Credentials>;
  /**
   * A case's setup signs its users in here when the target offers it: the service's own login (AuthService)
   * called in process, with no request. Black-box targets log setup users in through the column's driver.
   * The login operation itself is checked by its own cases (conformance/cases/auth.ts) on every column.
   */
  readonly signIn?: ((credentials: Credentials) => Promise<string>) | undefined;
  /**
   * Likewise a setup's orders (`Bearer <token>` of the owner): the service's own create (OrderService) in
   * process; through the driver elsewhere. Creating an order is checked by its own cases on every column.
   */
  readonly placeOrder?: ((authorization: string, item: string, quantity: number) => Promise<string>) | undefined;
  stop(): Promise<void>;
}

const ALL_IN_PROCESS: readonly Capability[] = [
  'inProcess',
  'users',
  'logs',
  'spans',
  'secret',
  'settings',
  'constants',
  'admin',
  'rows',
  'handlerFault',
];
/** An in-process fake target also has the simulator (it runs embedded) and the fakes' recorders. */
const FAKE_ONLY: readonly Capability[] = ['faults', 'recorders'];
/** What the test-control API of an `--embedded` instance offers black-box. */
const CONTROL: readonly Capability[] = ['users', 'recorders', 'rows', 'handlerFault'];
/** A spawned `--embedded` executable: its admin listener (simulator, control API), its output, its environment, the OTLP receiver. */
const SPAWNED: readonly Capability[] = ['logs', 'secret', 'settings', 'admin', 'faults', 'spans', ...CONTROL];

/** Why a black-box target (spawned or external) lacks a capability: the report's note on each skip. */
export const BLACK_BOX_LACKS: Readonly<Record<Capability, string>> = {
  inProcess: 'reaches into the running app (its server objects, the test process itself), which no API exposes',
  users: 'needs fresh users with no earlier orders or views: the instance offers no test-control API (--embedded) to provision them',
  logs: 'reads the service log, which an external instance shares only through GET /control/logs (--embedded)',
  spans: 'reads finished spans: point the instance at the runner`s OTLP receiver (--otlp-listen, OTLP_ENDPOINT)',
  faults: 'needs the simulator, which only an --embedded instance offers on its admin listener',
  recorders: 'reads published events, which only the test-control API of an --embedded instance exposes',
  rows: 'reads stored rows or cache entries, which only the test-control API of an --embedded instance exposes',
  handlerFault: 'injects a fault into a handler, which only the test-control API of an --embedded instance does',
  constants: 'needs a session linger or cap other than the fixed constants (spec 8)',
  secret: 'mints tokens with the signing secret, which an external instance shares only through CONFORMANCE_JWT_SECRET',
  settings: 'needs an instance of its own with other environment settings: give the run a launcher (--launch)',
  admin: 'needs the admin listener (--admin-url)',
};

export function capabilitiesOf(backend: BackendName): ReadonlySet<Capability> {
  if (backend === 'spawned') return new Set(SPAWNED);
  if (backend === 'external') return new Set();
  return new Set(backend === 'fake' ? [...ALL_IN_PROCESS, ...FAKE_ONLY] : ALL_IN_PROCESS);
}

/**
 * Records and faults through the app's own objects: an in-process real target, which has no control API
 * (its backends are the real ones; published events have no recorder there).
 */
function hooksControl(app: InProcessApp): TargetControl {
  const recorded = (order: Awaited<ReturnType<InProcessApp['backends']['repository']['findById']>>): RecordedOrder | undefined =>
    order === undefined
      ? undefined
      : {
          id: order.id,
          user_id: order.userId,
          item: order.item,
          quantity: order.quantity,
          status: order.status,
          created_at: order.createdAt.toISOString(),
        };
  const armed = new Set<FaultCall>();
  return {
    stored: async (id) => recorded(await app.backends.repository.findById(id)),
    cached: async (id) => recorded(await app.backends.cache.get(id)),
    events: () => Promise.reject(new Error('published events have no recorder on real backends (capability recorders)')),
    // As the control API does it (embedded/control/control.ts): the next call throws once, then the original is back.
    async injectFault(call: FaultCall) {
      const owner = (call === 'startSpan' ? app.app.core.tracer : app.backends.repository) as unknown as Record<string, unknown>;
      if (armed.has(call)) return;
      const had = Object.hasOwn(owner, call);
      const original = owner[call];
      armed.add(call);
      owner[call] = () => {
        if (had) owner[call] = original;
        else delete owner[call];
        armed.delete(call);
        throw new TypeError('injected bug: cannot read properties of undefined');
      };
    },
    armedFaults: async () => [...armed],
  };
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
    // The fake target runs embedded, so it takes the same control API as a black-box one (a local request, cheap).
    control: backend === 'fake' ? new ControlClient(app.adminUrl) : hooksControl(app),
    spans: () => app.spans.getFinishedSpans().map(seenSpanOf),
    sessionLingerMs: settings.sessionLingerMs ?? SPEC_SESSION_LINGER_MS,
    sessionCap: settings.sessionCap ?? SPEC_SESSION_CAP,
    logs: app.logs,
    jwtSecret: app.jwtSecret,
    async newUser(label) {
      userCounter += 1;
      const username = `${label}-${runId}-${userCounter}`;
      const password = await app.addUser(username, `${username}-pw-${randomBytes(4).toString('hex')}`);
      return { username, password };
    },
    // A quarter of a column's requests were setup logins, at ~3 ms of client and server CPU each (reports/test-suite.md).
    signIn: ({ username, password }) => app.app.core.auth.login(username, password),
    // Setup orders were the other large share (a page-size case makes 101).
    async placeOrder(authorization, item, quantity) {
      const { core } = app.app;
      const principal = await authenticate(authorization, core.tokens);
      return (await core.orders.create({ principal, signal: new AbortController().signal }, item, quantity)).id;
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
  /** `host:port` the runner's OTLP receiver listens on; the instance exports to it (OTLP_ENDPOINT). */
  readonly otlpListen?: string | undefined;
  /** The instance's JWT_SECRET (CONFORMANCE_JWT_SECRET), when the caller shares it: tokens minted for expiry and many sessions. */
  readonly jwtSecret?: string | undefined;
  /** A launcher (a Node script and its arguments) that starts an instance of its own for a case with settings (--launch). */
  readonly launch?: readonly string[] | undefined;
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

/** A fresh user on a black-box `--embedded` target, provisioned through its control API. */
async function provisioned(control: ControlClient, label: string): Promise<Credentials> {
  userCounter += 1;
  const credentials = {
    username: `${label}-${randomBytes(4).toString('hex')}-${userCounter}`,
    password: `pw-${randomBytes(9).toString('base64url')}`,
  };
  await control.provisionUser(credentials);
  return credentials;
}

/** What the matrix found an external instance to offer (probed once) and the runner's OTLP receiver, if listening. */
export interface ExternalOffers {
  readonly simulator?: boolean;
  readonly control?: boolean;
  /** GET /control/logs answers: the service log is followed through it. */
  readonly logs?: boolean;
  readonly receiver?: OtlpReceiver | undefined;
}

/**
 * A running instance by URL: black-box only. Nothing to start or stop. Its admin listener may offer the
 * simulator (fault and clock cases run through it) and the test-control API (fresh users, records, a
 * handler fault); spans arrive when the instance exports to the runner's receiver (OTLP_ENDPOINT).
 */
export function externalTarget(options: ExternalOptions, offers: ExternalOffers = {}): Target {
  const adminUrl = options.adminUrl?.replace(/\/$/, '');
  const capabilities: Capability[] = [];
  if (adminUrl !== undefined) capabilities.push('admin');
  if (adminUrl !== undefined && offers.simulator === true) capabilities.push('faults');
  if (adminUrl !== undefined && offers.control === true) capabilities.push(...CONTROL);
  if (offers.receiver !== undefined) capabilities.push('spans');
  if (options.jwtSecret !== undefined) capabilities.push('secret');
  if (options.launch !== undefined) capabilities.push('settings');
  const control = adminUrl !== undefined && offers.control === true ? new ControlClient(adminUrl) : undefined;
  const receiver = offers.receiver;
  // Followed from the start (startExternalTarget waits for the lines kept so far).
  const follower = control !== undefined && offers.logs === true ? new LogFollower(control) : undefined;
  if (follower !== undefined) capabilities.push('logs');
  return {
    transport: 'external',
    backend: 'external',
    shared: true,
    baseUrl: options.url.replace(/\/$/, ''),
    adminUrl,
    capabilities: new Set(capabilities),
    simulator: adminUrl !== undefined && offers.simulator === true ? new SimulatorClient(adminUrl) : undefined,
    control,
    spans: receiver === undefined ? undefined : () => receiver.spans,
    logs: follower,
    followLogs: follower === undefined ? undefined : () => follower.start(),
    jwtSecret: options.jwtSecret,
    sessionLingerMs: SPEC_SESSION_LINGER_MS,
    sessionCap: SPEC_SESSION_CAP,
    newUser: async (label, index) =>
      control !== undefined
        ? provisioned(control, label)
        : account(
            options.users,
            index,
            `external target: case needs user #${index + 1} (${label}) but only ${options.users.length} accounts were given (--user name:password)`,
          ),
    async stop() {
      follower?.stop();
    },
  };
}

/** The external target, its log followed up to now before a case reads it. */
export async function startExternalTarget(options: ExternalOptions, offers: ExternalOffers = {}): Promise<Target> {
  const target = externalTarget(options, offers);
  await target.followLogs?.();
  return target;
}

/**
 * The transport's executable, spawned with --embedded and only its environment as settings: a black-box
 * target whose faults and clock move through the simulator, whose users and records come through the
 * test-control API, whose logs are its stdout and whose spans it exports to a receiver of its own.
 */
export async function startSpawnedTarget(transport: Transport, settings: TargetSettings = {}): Promise<Target> {
  return startProcessTarget({ name: transport.name, backend: 'spawned', script: transport.bin, args: ['--embedded'] }, settings);
}

/**
 * An instance of its own for a case with settings on an external run (--launch): the launcher, a Node
 * script, is run as a spawned executable is (the case's environment, its stdout as the log); it starts
 * the implementation under test --embedded with that environment and stops it on SIGTERM.
 */
export function startLaunchedTarget(launch: readonly string[], settings: TargetSettings = {}): Promise<Target> {
  const [script, ...args] = launch;
  if (script === undefined) throw new Error('--launch: no launcher given');
  return startProcessTarget({ name: 'external', backend: 'external', script, args }, settings);
}

interface ProcessSpec {
  readonly name: string;
  readonly backend: 'spawned' | 'external';
  readonly script: string;
  readonly args: readonly string[];
}

async function startProcessTarget(spec: ProcessSpec, settings: TargetSettings): Promise<Target> {
  const jwtSecret = randomBytes(32).toString('base64url');
  const receiver = await OtlpReceiver.start();
  const env = {
    HTTP_ADDR: '127.0.0.1:0',
    ADMIN_ADDR: '127.0.0.1:0',
    JWT_SECRET: jwtSecret,
    RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'debug',
    OTLP_ENDPOINT: receiver.endpoint,
    // The SDK's batch delay (5 s by default), so that a case waiting for a span waits a moment, not seconds.
    OTEL_BSP_SCHEDULE_DELAY: '50',
    ...settings.env,
  } as Record<string, string>;
  const bin = spawnBin(spec.script, spec.args, env);
  try {
    const address = async (msg: string): Promise<string> =>
      `http://${String((await bin.waitForLine((l) => l['msg'] === msg, msg))['addr'])}`;
    const [baseUrl, adminUrl] = [await address('api: listening'), await address('admin: listening')];
    await bin.waitReady(adminUrl);
    const control = new ControlClient(adminUrl);
    return {
      transport: spec.name,
      backend: spec.backend,
      baseUrl,
      adminUrl,
      capabilities: capabilitiesOf('spawned'),
      simulator: new SimulatorClient(adminUrl),
      control,
      spans: () => receiver.spans,
      sessionLingerMs: SPEC_SESSION_LINGER_MS,
      sessionCap: SPEC_SESSION_CAP,
      logs: {
        get lines() {
          return bin.lines as unknown as LogLine[];
        },
        get raw() {
          return bin.rawLines();
        },
      },
      jwtSecret,
      newUser: (label) => provisioned(control, label),
      async stop() {
        await bin.stop();
        await receiver.stop();
      },
    };
  } catch (error) {
    bin.kill();
    await receiver.stop();
    throw error;
  }
}
