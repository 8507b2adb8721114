import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '../support/ports.ts';
import { startLocalServer, type LocalServer } from './local-servers.ts';

/**
 * A private PostgreSQL cluster (initdb into a temp dir, `postgres` on a spare loopback port), so fault
 * tests can stop and restart the database without touching the shared server on 5432. Postgres refuses
 * to run as root, so as root every binary runs as the `postgres` user through runuser.
 * Password authentication (scram) on TCP, so tests can check that the DSN password never leaks.
 */
export interface PostgresServer {
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** postgres://user:password@127.0.0.1:port/postgres */
  readonly dsn: string;
  /** Starts the postmaster (again) on the same port; resolves once `SELECT 1` succeeds. */
  start(): Promise<void>;
  /**
   * `fast`: SIGINT, the server rolls back and terminates every session (57P01) and shuts down cleanly.
   * `immediate`: SIGQUIT, sessions are dropped without a goodbye, crash recovery on the next start.
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Teardown: immediate stop if running, then the data directory is removed. Safe to call twice. */
  destroy(): Promise<void>;
}

const VERSIONS_DIR = '/usr/lib/postgresql';

/** The newest /usr/lib/postgresql/<version>/bin holding initdb and postgres, or undefined. */
export function postgresBinDir(): string | undefined {
  let versions: string[];
  try {
    versions = readdirSync(VERSIONS_DIR).sort((a, b) => Number(b) - Number(a));
  } catch {
    return undefined;
  }
  for (const version of versions) {
    const dir = join(VERSIONS_DIR, version, 'bin');
    try {
      accessSync(join(dir, 'initdb'), constants.X_OK);
      accessSync(join(dir, 'postgres'), constants.X_OK);
      return dir;
    } catch {
      // try an older version
    }
  }
  return undefined;
}

const RUN_AS = 'postgres';

function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

function userIds(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/** True when this machine can run a private cluster: the binaries, and (as root) a postgres user and runuser. */
export function canRunPostgres(): boolean {
  if (postgresBinDir() === undefined) return false;
  if (!runningAsRoot()) return true;
  if (userIds(RUN_AS) === undefined) return false;
  try {
    accessSync('/usr/sbin/runuser', constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** [command, args] running `binary args` as the postgres user when we are root. */
function asPostgres(binary: string, args: string[]): [string, string[]] {
  return runningAsRoot() ? ['/usr/sbin/runuser', ['-u', RUN_AS, '--', binary, ...args]] : [binary, args];
}

const ROOT_PREFIX = 'orders-pg-';
const OWNER_FILE = 'owner.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The number on the first line of a pid file, or undefined. */
function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True only for a live postmaster of this data directory (a recycled pid belongs to someone else). */
function isPostmasterOf(pid: number, dataDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dataDir);
  } catch {
    return false;
  }
}

/**
 * A test process killed outright (a worker terminated on a hook timeout) runs neither its teardown nor
 * its 'exit' handler: stop the clusters of ours whose owning process is gone and remove their directories.
 */
async function sweepOrphans(): Promise<void> {
  let entries: string[];
  try {
    entries = readdirSync(tmpdir()).filter((name) => name.startsWith(ROOT_PREFIX));
  } catch {
    return;
  }
  for (const name of entries) {
    const root = join(tmpdir(), name);
    const owner = readPid(join(root, OWNER_FILE));
    if (owner === undefined || alive(owner)) continue;
    const dataDir = join(root, 'data');
    const postmaster = readPid(join(dataDir, 'postmaster.pid'));
    if (postmaster !== undefined && isPostmasterOf(postmaster, dataDir)) {
      try {
        process.kill(postmaster, 'SIGQUIT');
      } catch {
        // exited meanwhile
      }
      // Removing the directory under a dying postmaster races with its last writes.
      for (let i = 0; i < 500 && alive(postmaster); i++) await sleep(10);
    }
    rmSync(root, { recursive: true, force: true });
  }
}

export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (bin === undefined) throw new Error('postgres binaries not found under /usr/lib/postgresql');
  await sweepOrphans();
  const root = mkdtempSync(join(tmpdir(), ROOT_PREFIX));
  writeFileSync(join(root, OWNER_FILE), String(process.pid));
  const dataDir = join(root, 'data');
  const pwFile = join(root, 'pwfile');
  const password = randomBytes(12).toString('hex');
  const user = 'postgres';
  writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
  if (runningAsRoot()) {
    const ids = userIds(RUN_AS);
    if (ids === undefined) throw new Error(`user ${RUN_AS} not found`);
    chownSync(root, ids.uid, ids.gid);
    chownSync(pwFile, ids.uid, ids.gid);
  }
  const [initCmd, initArgs] = asPostgres(join(bin, 'initdb'), [
    '-D',
    dataDir,
    '-U',
    user,
    '--pwfile',
    pwFile,
    '--auth-host=scram-sha-256',
    '--auth-local=trust',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  try {
    execFileSync(initCmd, initArgs, { stdio: 'pipe' });
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    throw new Error(`initdb failed: ${stderr}`, { cause: error });
  }
  rmSync(pwFile);

  const port = await freePort();
  const dsn = `postgres://${user}:${password}@127.0.0.1:${port}/postgres`;

  const waitUntilQueryable = async (_port: number, exited: Promise<never>): Promise<void> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const client = new pg.Client({ connectionString: dsn, connectionTimeoutMillis: 1_000 });
      client.on('error', () => undefined);
      const ok = await Promise.race([
        client.connect().then(
          () => client.query('SELECT 1').then(() => true),
          () => false,
        ),
        exited,
      ]);
      await client.end().catch(() => undefined);
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`postgres on ${port} not queryable within 15 s`);
      await sleep(25);
    }
  };

  let server: LocalServer;
  try {
    server = await startLocalServer({
      name: 'postgres',
      command: (p) =>
        asPostgres(join(bin, 'postgres'), [
          '-D',
          dataDir,
          '-p',
          String(p),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'unix_socket_directories=',
          // Nothing here is meant to survive a power cut; the shared server is the one durability is shown on.
          '-c',
          'fsync=off',
          '-c',
          'full_page_writes=off',
          '-c',
          'max_connections=40',
        ]),
      port,
      ready: waitUntilQueryable,
      // To the postmaster only: runuser, signalled too, would answer with SIGTERM and, 2 s later, SIGKILL.
      // runuser exits once the postmaster has, so the port is free when kill() resolves.
      signal: (child, signal) => process.kill(readPid(join(dataDir, 'postmaster.pid')) ?? child.pid!, signal),
      onStop: () => rmSync(root, { recursive: true, force: true }),
    });
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    user,
    password,
    dsn,
    start: () => server.start(),
    stop: (mode = 'fast') => server.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT'),
    async destroy() {
      await server.kill('SIGQUIT');
      await server.stop();
    },
  };
}
