import { spawn } from 'node:child_process';

/**
 * `command args` from the repository root with the terminal's stdout and stderr; resolves with its exit
 * code (128 when a signal ended it). `input`, when given, is written to its stdin, which is then closed.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: new URL('..', import.meta.url),
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'inherit', 'inherit'],
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
    child.stdin?.end(options.input);
  });
}
