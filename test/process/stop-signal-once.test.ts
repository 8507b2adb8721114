// One stop signal, one graceful stop (rule LIFE-4-shutdown), through the launcher a reader types:
// `npm start` runs `exec node scripts/with-node.mjs node bin/orders-grpc.ts --embedded`, with the system Node
// (20 on the machines this is written for) first on PATH, so the launcher re-runs the service under the
// pinned Node. Before the launcher stopped forwarding what the process group already delivered, a Ctrl-C
// reached the service twice and the second copy cut its shutdown short (no `stopped`, exit by signal).
// Every try waits only for what the processes do (start-up, the stop); the guards only stop a hang.
import { spawn } from 'node:child_process';
import { delimiter } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/transports.ts';

const LAUNCH = ['scripts/with-node.mjs', 'node', 'bin/orders-grpc.ts', '--embedded'];
const GUARD_MS = 60_000;
const TRIES = 20;

/** PATH as on a fresh machine: without the pinned Node that this test process itself runs under. */
function systemPath(): string {
  return (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((dir) => !dir.includes('orders-node') && !dir.startsWith(process.execPath.replace(/\/bin\/node$/, '')))
    .join(delimiter);
}

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The service's JSON log lines, in order (npm's banner and the terminal's `^C` echo are not JSON). */
  readonly lines: Record<string, unknown>[];
  readonly output: string;
}

/**
 * Starts `command` as a shell job would (its own process group, or its own terminal with `pty`), waits for
 * `api: listening`, calls `stop`, and collects everything until the job exits.
 */
async function job(
  command: string,
  args: readonly string[],
  stop: (pid: number, write: (text: string) => void) => void,
  pty = false,
): Promise<Run> {
  const env = {
    PATH: systemPath(),
    HOME: process.env['HOME'] ?? '/tmp',
    HTTP_ADDR: '127.0.0.1:0',
    ADMIN_ADDR: '127.0.0.1:0',
    npm_config_update_notifier: 'false',
  };
  // util-linux `script` gives the job a pseudo-terminal: a \x03 written to it is the terminal's Ctrl-C,
  // which the line discipline sends to the terminal's foreground process group.
  const child = pty
    ? spawn('script', ['-qfec', [command, ...args].join(' '), '/dev/null'], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let finished = false;
  void exited.then(() => (finished = true));
  const guard = setTimeout(() => (pty ? child.kill('SIGKILL') : process.kill(-child.pid!, 'SIGKILL')), GUARD_MS);
  try {
    const started = Date.now();
    while (!output.includes('"msg":"api: listening"')) {
      if (finished || Date.now() - started > GUARD_MS)
        throw new Error(`${command} ${args.join(' ')}: never listening: ${output.slice(-800)}`);
      await sleep(20);
    }
    stop(child.pid!, (text) => child.stdin!.write(text));
    const { code, signal } = await exited;
    const lines = output
      .split(/\r?\n/)
      .map((text) => text.slice(text.indexOf('{')))
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>);
    return { code, signal, lines, output };
  } finally {
    clearTimeout(guard);
    child.stdin?.end();
  }
}

/** The graceful stop, once: one `shutting down`, no ignored or forced signal, `stopped` last. */
function expectOneGracefulStop(run: Run, signal: NodeJS.Signals): void {
  const msgs = run.lines.map((line) => String(line['msg']));
  expect(
    run.lines.filter((line) => line['msg'] === 'shutting down'),
    run.output,
  ).toEqual([expect.objectContaining({ signal })]);
  expect(
    msgs.filter((msg) => msg.startsWith('shutdown in progress') || msg.startsWith('shutdown forced')),
    run.output,
  ).toEqual([]);
  expect(msgs.at(-1), run.output).toBe('stopped');
}

describe('one stop signal, one graceful stop, through scripts/with-node.mjs (rule LIFE-4-shutdown)', { timeout: TRIES * GUARD_MS }, () => {
  it(`${TRIES} × SIGINT to the process group of the launched service (npm start's command line): ${TRIES} × stopped, exit 0`, async () => {
    const results: Run[] = [];
    // Two at a time: start-up is most of each try, and the machine has two cores.
    for (let i = 0; i < TRIES; i += 2) {
      const pair = [i, i + 1].filter((n) => n < TRIES);
      results.push(...(await Promise.all(pair.map(() => job('node', LAUNCH, (pid) => process.kill(-pid, 'SIGINT'))))));
    }
    expect(results).toHaveLength(TRIES);
    for (const run of results) {
      expect({ code: run.code, signal: run.signal }, run.output).toEqual({ code: 0, signal: null });
      expectOneGracefulStop(run, 'SIGINT');
    }
  });

  it('npm start itself, SIGINT to its process group (npm, the launcher, the service): the service stops once, exit 0', async () => {
    const run = await job('npm', ['start', '--silent'], (pid) => process.kill(-pid, 'SIGINT'));
    expectOneGracefulStop(run, 'SIGINT');
    // The script `exec`s the launcher, so no `sh -c` shares the group: Debian's dash, hit by the SIGINT while it
    // waited, died of it after the service's exit 0, and npm reported 130.
    expect({ code: run.code, signal: run.signal }, run.output).toEqual({ code: 0, signal: null });
  });

  it('npm start on a terminal, Ctrl-C typed: the service stops once, npm exits 0 after `stopped`', async () => {
    // `exec`: the pseudo-terminal's own `sh -c` would otherwise sit in the foreground group, as npm's did.
    const run = await job('exec', ['npm', 'start', '--silent'], (_pid, write) => write('\x03'), true);
    expectOneGracefulStop(run, 'SIGINT');
    expect({ code: run.code, signal: run.signal }, run.output).toEqual({ code: 0, signal: null });
  });

  it("Ctrl-C typed on a terminal (a pseudo-terminal): the service, in the terminal's process group, stops once, exit 0", async () => {
    const run = await job('exec', ['node', ...LAUNCH], (_pid, write) => write('\x03'), true);
    expect({ code: run.code, signal: run.signal }, run.output).toEqual({ code: 0, signal: null });
    expectOneGracefulStop(run, 'SIGINT');
  });

  it("SIGTERM to the launcher's pid alone (a supervisor, a container runtime): forwarded once, stopped, exit 0", async () => {
    const run = await job('node', LAUNCH, (pid) => process.kill(pid, 'SIGTERM'));
    expect({ code: run.code, signal: run.signal }, run.output).toEqual({ code: 0, signal: null });
    expectOneGracefulStop(run, 'SIGTERM');
  });

  it('two SIGINTs to the service during its stop: the second is logged and ignored, the stop ends, exit 0', async () => {
    // Signalled twice at once, the service may see one (the kernel merges a signal still pending) or two.
    const run = await job('node', LAUNCH, (pid) => {
      process.kill(-pid, 'SIGINT');
      process.kill(-pid, 'SIGINT');
    });
    expect({ code: run.code, signal: run.signal }, run.output).toEqual({ code: 0, signal: null });
    const msgs = run.lines.map((line) => String(line['msg']));
    expect(msgs.filter((msg) => msg === 'shutting down')).toHaveLength(1);
    expect(msgs.filter((msg) => msg.startsWith('shutdown in progress: signal ignored')).length).toBeLessThanOrEqual(1);
    // The launcher forwards each signal it got, one after the other: on a slow machine the second can
    // reach a service whose stop was quick only after `stopped`, and is then ignored on the way to exit
    // 0 (stop-signals.ts keeps its listeners until the exit). Nothing else may follow `stopped`.
    expect(msgs).toContain('stopped');
    const after = msgs.slice(msgs.indexOf('stopped') + 1);
    expect(
      after.every((msg) => msg.startsWith('shutdown in progress: signal ignored')),
      JSON.stringify(after),
    ).toBe(true);
  });
});
