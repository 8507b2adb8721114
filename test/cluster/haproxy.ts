import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { REPO_ROOT } from '../support/transports.ts';

/** The balancer's configuration: deploy/haproxy/haproxy.cfg, addresses from the environment. */
export const HAPROXY_CONFIG = `${REPO_ROOT}deploy/haproxy/haproxy.cfg`;
/** Debian installs haproxy in /usr/sbin, which a non-root PATH may lack. */
const PATH = `${process.env['PATH'] ?? ''}:/usr/sbin:/sbin`;
const HAPROXY = process.env['HAPROXY'] ?? 'haproxy';

/** `haproxy -v`'s first line, or undefined when no haproxy can be run. */
export function haproxyVersion(): string | undefined {
  const result = spawnSync(HAPROXY, ['-v'], { env: { PATH }, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.split('\n')[0] : undefined;
}

/** One row of haproxy's stats CSV (`/stats;csv`): pxname, svname, status, wretr, wredis, … */
export type StatsRow = Readonly<Record<string, string>>;

export interface Haproxy {
  /** Rows by `<pxname>/<svname>`, e.g. `replicas/orders1`, `replicas/BACKEND`. */
  stats(): Promise<Map<string, StatsRow>>;
  /** Everything haproxy wrote (one httplog line per request, server state changes). */
  log(): string;
  stop(): Promise<void>;
}

/** haproxy's stats page as CSV, rows by `<pxname>/<svname>`. */
export async function readStats(statsUrl: string): Promise<Map<string, StatsRow>> {
  const csv = await fetch(`${statsUrl};csv`, { signal: AbortSignal.timeout(3_000) }).then((r) => r.text());
  const [header = '', ...rows] = csv.trim().split('\n');
  const names = header.replace(/^# /, '').split(',');
  const table = new Map<string, StatsRow>();
  for (const row of rows) {
    const cells = row.split(',');
    const record = Object.fromEntries(names.map((name, i) => [name, cells[i] ?? '']));
    table.set(`${record['pxname']}/${record['svname']}`, record);
  }
  return table;
}

/**
 * Runs haproxy in the foreground (-db) on deploy/haproxy/haproxy.cfg with `env` naming the addresses.
 * Not spawnBin: that one runs the repository's Node executables; this is a system binary.
 */
export function startHaproxy(env: Readonly<Record<string, string>>, statsUrl: string): Haproxy {
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', HAPROXY_CONFIG], { env: { PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (error) => {
      output += `\nspawn ${HAPROXY}: ${error.message}`;
      resolve();
    });
  });
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  return {
    stats: () => readStats(statsUrl),
    log: () => output,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
