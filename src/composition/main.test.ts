// runMain in this process (spec 3.4): its stdout, stderr, stop signals and exit are stand-ins (MainOptions.io),
// so its arguments, the lines it logs, the exit code it returns and the stop it makes on a signal are read
// here. What a spawned executable does with them (bin/*.ts: process.exitCode, a real SIGINT) is
// test/process/executables.test.ts.
import { EventEmitter, once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { until } from '../../test/support/eventually.ts';
import type { Env } from '../config/env.ts';
import type { SignalSource } from '../lifecycle/stop-signals.ts';
import { stdlibTransport } from '../transports/stdlib/server.ts';
import { DEMO_USERS } from '../../embedded/backends.ts';
import { PROCESS_IO, runMain } from './main.ts';
import { stdoutDestination } from '../observability/logger.ts';

type Line = Record<string, unknown>;

/** One runMain with its output captured; `events` holds each line's msg and each flush, in order. */
function start(argv: string[], env: Env, terminal?: boolean) {
  const events: string[] = [];
  const lines: Line[] = [];
  let raw = '';
  let stderr = '';
  const signals = new EventEmitter();
  const exit = vi.fn<(code: number) => void>();
  const stdout = {
    write(line: string): void {
      raw += line;
      // Every write is one JSON line, but a terminal's banner (kept in `raw` only).
      if (terminal === true && !line.startsWith('{')) return;
      const parsed = JSON.parse(line) as Line;
      lines.push(parsed);
      events.push(String(parsed['msg']));
    },
    flush(callback?: (error?: Error) => void): void {
      events.push('<flush>');
      callback?.();
    },
  };
  const code = runMain({
    serviceName: 'orders-main-test',
    transport: stdlibTransport,
    argv,
    env,
    io: {
      stdout: () => stdout,
      stderr: { write: (text: string) => (stderr += text) },
      signals: signals as unknown as SignalSource,
      exit,
      ...(terminal === undefined ? {} : { terminal }),
    },
  });
  const line = async (msg: string): Promise<Line> => {
    // A guard against a hang only: start-up on a busy machine.
    await until(() => lines.some((l) => l['msg'] === msg), `the line \`${msg}\``, 15_000);
    return lines.find((l) => l['msg'] === msg) as Line;
  };
  return { code, events, lines, line, raw: () => raw, stderr: () => stderr, signals, exit };
}

const portOf = (addr: unknown): number => Number(String(addr).split(':').at(-1));

describe('runMain (spec 3.4)', () => {
  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [['extra'], "Unexpected argument 'extra'"],
    [['--embedded=yes'], "Option '--embedded' does not take an argument"],
  ])('[LIFE-3-missing-env] %j: exit 2, the problem and the usage on stderr, nothing logged or started', async (argv, problem) => {
    const run = start(argv, { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0' });
    expect(await run.code).toBe(2);
    expect(run.stderr()).toMatch(new RegExp(`^orders-main-test: ${problem}.*\\nusage: orders-main-test \\[--embedded\\]\\n$`, 's'));
    expect(run.events).toEqual([]);
  });

  it('[LIFE-3-missing-env] without stand-ins it writes to the process: bad arguments go to its stderr', async () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((text: string | Uint8Array) => written.push(String(text)) > 0);
    try {
      expect(await runMain({ serviceName: 'orders-main-test', transport: stdlibTransport, argv: ['--bogus'], env: {} })).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(written.join('')).toMatch(/^orders-main-test: Unknown option '--bogus'.*\nusage: orders-main-test \[--embedded\]\n$/s);
  });

  it("[LIFE-4-shutdown] the executables run with the process's own stdout, stderr, signals and exit", () => {
    expect(PROCESS_IO.stdout).toBe(stdoutDestination);
    expect(PROCESS_IO.terminal).toBe(process.stdout.isTTY === true);
    expect(PROCESS_IO.stderr).toBe(process.stderr);
    expect(PROCESS_IO.signals).toBe(process);
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    try {
      PROCESS_IO.exit(143);
      expect(exit.mock.calls).toEqual([[143]]);
    } finally {
      exit.mockRestore();
    }
  });

  it('[LIFE-4-shutdown] --embedded: the bound ports, the demo logins and the generated secret are logged; SIGINT stops it, `stopped`, exit 0, flushed', async () => {
    const run = start(['--embedded'], { HTTP_ADDR: ':0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'info' });
    const api = await run.line('api: listening');
    const admin = await run.line('admin: listening');
    // The bound ports (`:0` asked the OS for one), each with the configured host or none.
    expect(String(admin['addr'])).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    expect(String(api['addr'])).toMatch(/^:[1-9]\d*$/);
    const adminUrl = `http://127.0.0.1:${portOf(admin['addr'])}`;
    const apiUrl = `http://127.0.0.1:${portOf(api['addr'])}`;
    expect((await fetch(`${adminUrl}/livez`)).status).toBe(200);
    expect(await run.line('embedded mode: JWT_SECRET is not set; using a random secret, tokens die with this process')).toMatchObject({
      level: 'warn',
    });
    const demo = await run.line(
      `embedded mode: in-memory backends; demo logins ${DEMO_USERS.map((u) => `${u.username} / ${u.password}`).join(', ')}`,
    );
    expect(demo).toMatchObject({ level: 'info', users: DEMO_USERS.map((u) => u.username) });
    expect(DEMO_USERS.length).toBeGreaterThan(1);

    // The console page reads the log tail runMain tees stdout into, and its count of announced orders (CONSOLE-feed).
    const login = await fetch(`${apiUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: DEMO_USERS[0].username, password: DEMO_USERS[0].password }),
    });
    const { token } = (await login.json()) as { token: string };
    const created = await fetch(`${apiUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ item: 'widget', quantity: 1 }),
    });
    expect(created.status).toBe(201);
    await run.line('order placed');
    const state = (await (await fetch(`${adminUrl}/console/state`)).json()) as {
      counts: { eventsAnnounced: number | null };
      log: { lines: Array<{ text: string }> } | null;
    };
    expect(state.counts.eventsAnnounced).toBe(1);
    expect(state.log?.lines.map((l) => (JSON.parse(l.text) as Line)['msg'])).toEqual(
      expect.arrayContaining(['api: listening', 'order placed']),
    );

    run.signals.emit('SIGINT', 'SIGINT');
    expect(await run.code).toBe(0);
    expect(run.events).toContain('shutting down');
    // `stopped` is the last line, and what is held is flushed after it.
    expect(run.events.slice(-2)).toEqual(['stopped', '<flush>']);
    expect(run.exit).not.toHaveBeenCalled();
    expect(run.stderr()).toBe('');
  });

  it('stdout a terminal: after `api: listening` a short banner names the API, its docs, the admin listener, the console and the demo logins', async () => {
    const run = start(['--embedded'], { HTTP_ADDR: ':0', ADMIN_ADDR: '127.0.0.1:0' }, true);
    const api = portOf((await run.line('api: listening'))['addr']);
    const admin = portOf((await run.line('admin: listening'))['addr']);
    await until(() => run.raw().includes('Ctrl-C stops it'), 'the banner', 15_000);
    const banner = run.raw().slice(run.raw().indexOf('\norders-main-test is running'));
    expect(banner).toBe(
      [
        '',
        'orders-main-test is running on in-memory backends (--embedded); Ctrl-C stops it.',
        `  API       http://localhost:${api}`,
        `  API docs  http://localhost:${api}/swagger/`,
        `  admin     http://127.0.0.1:${admin}/healthz  http://127.0.0.1:${admin}/metrics`,
        `  console   http://127.0.0.1:${admin}/console/`,
        `  logins    ${DEMO_USERS.map((u) => `${u.username} / ${u.password}`).join(', ')}`,
        '',
        '',
      ].join('\n'),
    );
    // After the JSON lines that carry the same facts, so a log reader sees them first.
    expect(run.raw().indexOf('"msg":"api: listening"')).toBeLessThan(run.raw().indexOf(banner));
    expect((await fetch(`http://127.0.0.1:${admin}/console/`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${api}/swagger/`)).status).toBe(200);
    run.signals.emit('SIGINT', 'SIGINT');
    expect(await run.code).toBe(0);
  });

  it('stdout not a terminal (a pipe, a collector): JSON lines only, no banner', async () => {
    const run = start(['--embedded'], { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0' }, false);
    await run.line('embedded mode: in-memory backends; demo logins alice / alice-password, bob / bob-password');
    run.signals.emit('SIGINT', 'SIGINT');
    expect(await run.code).toBe(0);
    // The stand-in parses every write as JSON: a banner would have failed the run. And none was written.
    expect(run.raw()).not.toContain('Ctrl-C stops it');
    expect(run.events.filter((e) => e !== '<flush>')).toEqual(run.lines.map((l) => l['msg']));
  });

  it('[CONFIG-no-secret-echo] a JWT_SECRET given: no warning, never echoed; the hosts of the addresses as configured', async () => {
    const secret = 'main-test-secret-0123456789abcdef0123456789';
    const run = start(['--embedded'], { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: ':0', JWT_SECRET: secret });
    const api = await run.line('api: listening');
    expect(String(api['addr'])).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    expect(String((await run.line('admin: listening'))['addr'])).toMatch(/^:[1-9]\d*$/);
    run.signals.emit('SIGTERM', 'SIGTERM');
    expect(await run.code).toBe(0);
    expect(run.events).not.toContain('embedded mode: JWT_SECRET is not set; using a random secret, tokens die with this process');
    expect(run.raw()).not.toContain(secret);
    expect(run.stderr()).toBe('');
  });

  it('[LIFE-4-shutdown] LOG_LEVEL=warn: only warnings and errors; a second signal is ignored, a third exits with 130 after a flush', async () => {
    const run = start(['--embedded'], { HTTP_ADDR: '127.0.0.1:0', ADMIN_ADDR: '127.0.0.1:0', LOG_LEVEL: 'warn' });
    await run.line('embedded mode: JWT_SECRET is not set; using a random secret, tokens die with this process');
    run.signals.emit('SIGINT', 'SIGINT');
    run.signals.emit('SIGINT', 'SIGINT');
    expect(run.exit).not.toHaveBeenCalled();
    run.signals.emit('SIGINT', 'SIGINT');
    expect(run.exit.mock.calls).toEqual([[130]]);
    // The forced exit's line is flushed before the exit.
    const forced = run.events.indexOf('shutdown forced: third stop signal, exiting without waiting for the drain');
    expect(forced).toBeGreaterThanOrEqual(0);
    expect(run.events[forced + 1]).toBe('<flush>');
    // The stand-in exit returns: the stop completes.
    expect(await run.code).toBe(0);
    expect(run.lines.map((l) => l['level'])).not.toContain('info');
    expect(run.lines.filter((l) => l['level'] === 'warn').map((l) => l['msg'])).toEqual([
      'embedded mode: JWT_SECRET is not set; using a random secret, tokens die with this process',
      'shutdown in progress: signal ignored (the drain is bounded; a third signal stops at once)',
    ]);
  });

  it('[CONFIG-required] without --embedded a missing variable fails start-up: exit 1, `start-up failed: configuration` naming it, no secret', async () => {
    const env = {
      POSTGRES_DSN: 'postgres://u:pg-s3cret@127.0.0.1:1/x',
      JWT_SECRET: 'main-test-secret-abcdefabcdefabcdefabcdef',
      REDIS_ADDR: '127.0.0.1:1',
    };
    const run = start([], env);
    expect(await run.code).toBe(1);
    expect(run.lines).toEqual([
      expect.objectContaining({ level: 'error', msg: 'start-up failed: configuration', err: 'config: missing required variable NATS_URL' }),
    ]);
    expect(run.events.at(-1)).toBe('<flush>');
    expect(run.raw()).not.toContain('pg-s3cret');
    expect(run.raw()).not.toContain(env.JWT_SECRET);
    expect(run.stderr()).toBe('');
  });

  it('[LIFE-2-init-connect] a listener that cannot bind fails start-up: exit 1, `start-up failed` with the listener named', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const run = start(['--embedded'], { HTTP_ADDR: `127.0.0.1:${(taken.address() as AddressInfo).port}`, ADMIN_ADDR: '127.0.0.1:0' });
      expect(await run.code).toBe(1);
      const failed = run.lines.find((l) => String(l['msg']).startsWith('start-up failed'));
      expect(failed).toMatchObject({ level: 'error', msg: 'start-up failed', err: expect.stringMatching(/^api: listen: .*EADDRINUSE/) });
      expect(run.events.at(-1)).toBe('<flush>');
      expect(run.events).not.toContain('stopped');
    } finally {
      taken.close();
    }
  });
});
