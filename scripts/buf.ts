/**
 * The pinned buf CLI, installed on demand into a cache outside the repo. Not a devDependency: the npm
 * registry this project installs from lacks buf's non-Linux platform packages, so a lock file naming
 * them cannot be written and one without them fails `npm ci`. Only code generation needs buf.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const BUF_VERSION = '1.75.0';

export function bufBinary(): string {
  const cache = join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), `orders-buf-${BUF_VERSION}`);
  const bin = join(cache, 'node_modules', '.bin', 'buf');
  if (!existsSync(bin)) {
    process.stderr.write(`buf: installing @bufbuild/buf@${BUF_VERSION} into ${cache}\n`);
    execFileSync('npm', ['install', '--silent', '--no-audit', '--no-fund', '--prefix', cache, `@bufbuild/buf@${BUF_VERSION}`], {
      stdio: 'inherit',
    });
  }
  return bin;
}
