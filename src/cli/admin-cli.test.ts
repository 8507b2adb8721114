// orders-admin in this process: its argument parsing, usage and exit codes (0 done, 1 failed, 2 bad
// arguments), the password read from stdin, and its failures without a database. Its commands on a
// database: src/adapters/postgres/pglite.test.ts (PGlite, with the other checks that need one) and
// test/contracts/admin-cli*.test.ts (the real server, and through the bin).
import { describe, expect, it } from 'vitest';
import { cli } from '../../test/contracts/admin-cli-harness.ts';
import type { Env } from '../config/env.ts';
import { usage, USAGE, type AdminCommand } from './admin-cli.ts';

/** Nothing listens on port 1: a connection is refused at once. */
const CLOSED: Env = { POSTGRES_DSN: 'postgres://u:s3cret@127.0.0.1:1/x' };

describe('orders-admin arguments', () => {
  it('[CONFIG-formats] the usage names every command, the environment and the exit codes', () => {
    expect(USAGE.startsWith('usage:\n  orders-admin migrate ')).toBe(true);
    for (const text of [
      'orders-admin users add <username>',
      'orders-admin users set-password <username>',
      'POSTGRES_DSN     required',
      'exit codes: 0 done, 1 failed, 2 bad arguments\n',
    ])
      expect(USAGE).toContain(text);
  });

  it.each([['-h'], ['--help'], ['help']])(
    '[CONFIG-formats] %s alone prints the usage on stdout, exit 0, touching nothing',
    async (flag) => {
      // No POSTGRES_DSN: help needs no configuration.
      expect(await cli([flag], {})).toEqual({ code: 0, stdout: USAGE, stderr: '' });
    },
  );

  it.each([
    [[], 'missing command'],
    [['--help', 'migrate'], 'unknown arguments: --help migrate'],
    [['help', 'help'], 'unknown arguments: help help'],
    [['-h', 'x'], 'unknown arguments: -h x'],
    [['migrate', 'now'], 'unknown arguments: migrate now'],
    [['frobnicate'], 'unknown arguments: frobnicate'],
    [['users'], 'unknown arguments: users'],
    [['users', 'add'], 'unknown arguments: users add'],
    [['users', 'set-password'], 'unknown arguments: users set-password'],
    [['users', 'add', 'a', 'b'], 'unknown arguments: users add a b'],
    [['users', 'set-password', 'a', 'b'], 'unknown arguments: users set-password a b'],
    [['users', 'remove', 'a'], 'unknown arguments: users remove a'],
    [['people', 'add', 'a'], 'unknown arguments: people add a'],
    [['users', 'add', ''], 'username must be non-empty, without surrounding whitespace'],
    [['users', 'add', ' padded'], 'username must be non-empty, without surrounding whitespace'],
    [['users', 'set-password', 'padded '], 'username must be non-empty, without surrounding whitespace'],
  ])('[CONFIG-formats] %j: exit 2, `%s` and the usage on stderr, nothing on stdout', async (argv, problem) => {
    // A closed DSN: were the arguments taken, the command would fail with exit 1 instead.
    expect(await cli(argv, CLOSED, 'pw\n')).toEqual({ code: 2, stdout: '', stderr: `orders-admin: ${problem}\n${USAGE}` });
  });

  it('[CONFIG-formats] an added command gets the words after its name, and its lines in the usage', async () => {
    const seen: (readonly string[])[] = [];
    const echo: AdminCommand = {
      name: 'echo',
      usage: '  orders-admin echo <words>             the words back\n',
      environment: '  ECHO_TO          echo: where\n',
      run: async (args) => (seen.push(args), 7),
    };
    expect(await cli(['echo', 'a', 'b'], {}, '', [echo])).toEqual({ code: 7, stdout: '', stderr: '' });
    expect(seen).toEqual([['a', 'b']]);
    const full = usage([echo]);
    expect(full).toBe(
      USAGE.replace('environment:\n', `${echo.usage}environment:\n`).replace('exit codes:', `${echo.environment}exit codes:`),
    );
    expect(await cli(['--help'], {}, '', [echo])).toEqual({ code: 0, stdout: full, stderr: '' });
    // Its name only as the first word.
    expect((await cli(['users', 'echo'], {}, '', [echo])).stderr).toBe(`orders-admin: unknown arguments: users echo\n${full}`);
    expect(seen).toHaveLength(1);
  });
});

describe('orders-admin without a database', () => {
  it.each([[['migrate']], [['users', 'add', 'alice']], [['users', 'set-password', 'alice']]])(
    '[CONFIG-required] %j without POSTGRES_DSN: exit 1 naming the variable',
    async (argv) => {
      expect(await cli(argv, {}, 'pw\n')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'orders-admin: config: missing required variable POSTGRES_DSN\n',
      });
    },
  );

  it('[CONFIG-no-secret-echo] a bad POSTGRES_SCHEMA: exit 1 naming it', async () => {
    expect(await cli(['migrate'], { ...CLOSED, POSTGRES_SCHEMA: 'Bad-Name' })).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: config: POSTGRES_SCHEMA must be a lowercase identifier (a-z, 0-9, _; at most 63 characters)\n',
    });
  });

  it.each([[['users', 'add', 'alice']], [['users', 'set-password', 'alice']]])(
    '[AUTH-10-credentials] %j refuses an empty password (a lone newline counts as empty) before touching the database',
    async (argv) => {
      for (const stdin of ['', '\n', '\r\n']) {
        expect(await cli(argv, CLOSED, stdin)).toEqual({
          code: 1,
          stdout: '',
          stderr: 'orders-admin: password must not be empty (read from stdin)\n',
        });
      }
    },
  );

  it.each([[['migrate']], [['users', 'add', 'alice']], [['users', 'set-password', 'alice']]])(
    '[CONFIG-no-secret-echo] %j on an unreachable database: exit 1, a message naming host and database, never the password',
    async (argv) => {
      const result = await cli(argv, CLOSED, 'pw-123\n');
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^orders-admin: database: cannot connect to POSTGRES_DSN \(127\.0\.0\.1:1\/x\)/);
      expect(result.stderr).not.toContain('s3cret');
      expect(result.stderr).not.toContain('pw-123');
    },
  );

  it('[ERR-internal] an unexpected failure is reported by its type only, exit 1', async () => {
    async function* failing(): AsyncGenerator<string> {
      yield 'partial-secret';
      throw new TypeError('stdin broke while holding partial-secret');
    }
    expect(await cli(['users', 'add', 'alice'], CLOSED, failing())).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: unexpected TypeError\n',
    });
    async function* throwsString(): AsyncGenerator<string> {
      yield* [];
      throw 'not an Error';
    }
    expect(await cli(['users', 'add', 'alice'], CLOSED, throwsString())).toEqual({
      code: 1,
      stdout: '',
      stderr: 'orders-admin: unexpected error\n',
    });
  });
});
