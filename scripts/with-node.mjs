#!/usr/bin/env node
// Runs a command under a Node that can run this repository. Plain JavaScript on purpose: it must run on
// the old Node it replaces. The version is the one in .node-version (also .nvmrc), the single source of
// truth: when the current Node is older than package.json's engines (or, with --exact, is not exactly that
// version), node@<that version> is installed once from the npm registry into a cache outside the repo and
// put first on PATH for the command.
//   node scripts/with-node.mjs <command> [args...]     e.g. node scripts/with-node.mjs vitest run
//   node scripts/with-node.mjs --exact --print-bin     prints the directory to put first on PATH (.ci/run)
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pinned = readFileSync(join(root, '.node-version'), 'utf8').trim().replace(/^v/, '');
const minimum = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node.replace(/^>=\s*/, '');

const args = process.argv.slice(2);
const exact = args[0] === '--exact' ? Boolean(args.shift()) : false;
const printBin = args[0] === '--print-bin' ? Boolean(args.shift()) : false;

const current = process.versions.node;
// Dotted versions compared number by number; a missing part counts as lower ("22.12.0" >= "22.12").
const suffices = exact ? current === pinned : current.localeCompare(minimum, 'en', { numeric: true }) >= 0;
let bin = '';
if (!suffices) {
  const cache = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'orders-node');
  bin = join(cache, 'node_modules', '.bin');
  const manifest = join(cache, 'node_modules', 'node', 'package.json');
  const installed = existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).version : undefined;
  if (installed !== pinned || !existsSync(join(bin, 'node'))) {
    process.stderr.write(`with-node: node ${current} ${exact ? 'is not' : 'is older than'} ${exact ? pinned : minimum}; installing node@${pinned} into ${cache}\n`);
    execFileSync('npm', ['install', '--silent', '--no-audit', '--no-fund', '--no-save', '--prefix', cache, `node@${pinned}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
}

if (printBin) {
  process.stdout.write(`${bin}\n`);
  process.exit(0);
}
const [command, ...rest] = args;
if (!command) {
  process.stderr.write('usage: node scripts/with-node.mjs [--exact] <command> [args...] | [--exact] --print-bin\n');
  process.exit(2);
}
const env = bin === '' ? process.env : { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
const child = spawn(command, rest, { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
