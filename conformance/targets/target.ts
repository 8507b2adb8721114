import { randomBytes } from 'node:crypto';
import type { Env } from '../../src/config/env.ts';
import { startInProcess, type BackendKind, type InProcessApp } from '../../test/support/in-process-app.ts';
import type { Transport, RestVariant } from '../../test/support/transports.ts';

export type BackendName = BackendKind | 'external';

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
  /** The fakes' trouble switches and recorders (backend fake only). */
  | 'faults'
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
  readonly hooks: InProcessApp | undefined;
  /** A user for this case: fresh (in-process) or the index-th provided account (external). */
  newUser(label: string, index: number): Promise<Credentials>;
  stop(): Promise<void>;
}

const ALL_IN_PROCESS: readonly Capability[] = ['inProcess', 'users', 'logs', 'spans', 'secret', 'settings', 'admin'];
let userCounter = 0;

export async function startInProcessTarget(transport: Transport, backend: BackendKind, settings: TargetSettings = {}): Promise<Target> {
  const app = await startInProcess({
    transport: transport.factory,
    backend,
    serviceName: `orders-${transport.name}`,
    env: settings.env,
    sessionLingerMs: settings.sessionLingerMs,
    sessionCap: settings.sessionCap,
  });
  const runId = randomBytes(3).toString('hex');
  return {
    transport: transport.name,
    backend,
    baseUrl: app.baseUrl,
    adminUrl: app.adminUrl,
    capabilities: new Set<Capability>(backend === 'fake' ? [...ALL_IN_PROCESS, 'faults'] : ALL_IN_PROCESS),
    hooks: app,
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

/** A running instance by URL: black-box only. Nothing to start or stop. */
export function externalTarget(options: ExternalOptions): Target {
  return {
    transport: 'external',
    backend: 'external',
    baseUrl: options.url.replace(/\/$/, ''),
    adminUrl: options.adminUrl?.replace(/\/$/, ''),
    capabilities: new Set<Capability>(options.adminUrl === undefined ? [] : ['admin']),
    hooks: undefined,
    async newUser(label, index) {
      const account = options.users[index];
      if (account === undefined) throw new Error(`external target: case needs user #${index + 1} (${label}) but only ${options.users.length} accounts were given (--user name:password)`);
      return account;
    },
    async stop() {},
  };
}
