import { describe, expect, it } from 'vitest';
import { USAGE } from '../../src/cli/admin-cli.ts';
import type { Env } from '../../src/config/env.ts';
import { cli, runBin } from './admin-cli-harness.ts';

describe('orders-admin arguments (no database needed)', () => {
  const closed: Env = { POSTGRES_DSN: 'postgres://u:s3cret@127.0.0.1:1/x' };

  it.each([[[]], [['users', 'add']], [['users', 'add', 'a', 'b']], [['frobnicate']], [['migrate', 'now']], [['users', 'add', ' padded ']]])(
    'rejects %j with usage and exit 2',
    async (argv) => {
      const result = await cli(argv, closed);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(USAGE);
      expect(result.stdout).toBe('');
    },
  );

  it('--help prints usage on stdout, exit 0', async () => {
    expect(await cli(['--help'], {})).toEqual({ code: 0, stdout: USAGE, stderr: '' });
  });

  it('a missing POSTGRES_DSN is exit 1 naming the variable', async () => {
    const result = await cli(['migrate'], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('orders-admin: config: missing required variable POSTGRES_DSN\n');
  });

  it('refuses an empty password (a lone newline counts as empty) before touching the database', async () => {
    for (const stdin of ['', '\n', '\r\n']) {
      const result = await cli(['users', 'add', 'alice'], closed, stdin);
      expect(result).toEqual({ code: 1, stdout: '', stderr: 'orders-admin: password must not be empty (read from stdin)\n' });
    }
  });

  it('an unreachable database is exit 1 with a message that hides the password', async () => {
    const result = await cli(['users', 'add', 'alice'], closed, 'pw\n');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^orders-admin: database: cannot connect to POSTGRES_DSN \(127\.0\.0\.1:1\/x\)/);
    expect(result.stderr).not.toContain('s3cret');
  });

  it('the bin wrapper passes argv through and sets the exit code', async () => {
    const result = await runBin(['bogus'], {}, '');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('orders-admin: unknown arguments: bogus');
  });
});
