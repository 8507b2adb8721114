import { Readable } from 'node:stream';
import { runAdminCli, type AdminCommand } from '../../src/cli/admin-cli.ts';
import type { Env } from '../../src/config/env.ts';
import { spawnBin } from '../support/spawn-bin.ts';

/**
 * orders-admin in this process, as its tests call it: its argv, environment, stdin (text, or chunks as a
 * pipe delivers them) and the commands added to it; what it wrote and its exit code.
 */
export async function cli(
  argv: string[],
  env: Env,
  stdin: AsyncIterable<string | Uint8Array> | string = '',
  extra: readonly AdminCommand[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io = {
    env,
    stdin: typeof stdin === 'string' ? Readable.from(stdin === '' ? [] : [Buffer.from(stdin)]) : stdin,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  };
  const code = await runAdminCli(argv, io, extra);
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
