#!/usr/bin/env node
// Runs a command under Node >= 22.12. Plain JavaScript on purpose: it must run on the old Node it
// replaces. When the current Node is older, node@24 is installed once from the npm registry into a
// cache outside the repo (the same cache .ci/run uses) and put first on PATH for the command.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

const [major, minor] = process.versions.node.split('.').map(Number);
let env = process.env;
if (major < 22 || (major === 22 && minor < 12)) {
  const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'orders-node');
  const bin = join(cache, 'node_modules', '.bin');
  if (!existsSync(join(bin, 'node'))) {
    process.stderr.write(`with-node: node ${process.versions.node} is too old; installing node@24 into ${cache}\n`);
    execFileSync('npm', ['install', '--silent', '--no-audit', '--no-fund', '--prefix', cache, 'node@24'], { stdio: 'inherit' });
  }
  env = { ...env, PATH: `${bin}${delimiter}${env.PATH ?? ''}` };
}

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: node scripts/with-node.mjs <command> [args...]\n');
  process.exit(2);
}
const child = spawn(command, args, { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
