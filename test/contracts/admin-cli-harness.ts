import { Readable } from 'node:stream';
import { runAdminCli } from '../../src/cli/admin-cli.ts';
import type { Env } from '../../src/config/env.ts';
import { spawnBin } from '../support/spawn-bin.ts';

/** orders-admin in this process (its argv, environment and stdin), as its tests call it. */
export async function cli(argv: string[], env: Env, stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runAdminCli(argv, {
    env,
    stdin: Readable.from(stdin === '' ? [] : [Buffer.from(stdin)]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** `node bin/orders-admin.ts` itself, the password piped in. */
export async function runBin(
  argv: string[],
  env: Record<string, string>,
  stdin: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = spawnBin('bin/orders-admin.ts', argv, env, stdin);
  return { code: (await bin.exited).code, stdout: bin.stdout(), stderr: bin.stderr() };
}
