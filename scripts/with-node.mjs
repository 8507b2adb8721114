#!/usr/bin/env node
// Runs a command under a Node that can run this repository. Plain JavaScript on purpose: it must run on
// the old Node it replaces. The version is the one in .node-version (also .nvmrc), the single source of
// truth: when the current Node is older than package.json's engines (or, with --exact, is not exactly that
// version), node@<that version> is installed once from the npm registry into a cache outside the repo and
// put first on PATH for the command. Every command but npm's own needs node_modules/: without it the
// launcher says, in one line, to run `npm run setup` first.
//   node scripts/with-node.mjs <command> [args...]     e.g. node scripts/with-node.mjs vitest run
//   node scripts/with-node.mjs --exact --print-bin     prints the directory to put first on PATH (.ci/run)
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { constants, homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pinned = readFileSync(join(root, '.node-version'), 'utf8').trim().replace(/^v/, '');
const minimum = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node.replace(/^>=\s*/, '');

const args = process.argv.slice(2);
const exact = args[0] === '--exact' ? Boolean(args.shift()) : false;
const printBin = args[0] === '--print-bin' ? Boolean(args.shift()) : false;

const [command, ...rest] = args;
if (!printBin && !command) {
  process.stderr.write('usage: node scripts/with-node.mjs [--exact] <command> [args...] | [--exact] --print-bin\n');
  process.exit(2);
}
// Pre-flight, before any download: `npm run setup` (npm ci) is what makes node_modules/, so only npm may run
// without it; anything else would fail with a module-not-found stack (pino) or `spawn vitest ENOENT`.
if (!printBin && command !== 'npm' && !existsSync(join(root, 'node_modules'))) {
  const event = process.env.npm_lifecycle_event;
  const what = event === undefined ? args.join(' ') : ['start', 'test'].includes(event) ? `npm ${event}` : `npm run ${event}`;
  process.stderr.write(`with-node: node_modules/ is missing, so \`${what}\` cannot run: run \`npm run setup\` first\n`);
  process.exit(1);
}

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
    // npm shows no progress when silent, and its own output is mostly noise here: one line before, one after.
    process.stderr.write(
      `with-node: node ${current} ${exact ? 'is not' : 'is older than'} ${exact ? pinned : minimum}; downloading node@${pinned} ` +
        `from the npm registry into ${cache} (once; this takes a while)...\n`,
    );
    const started = Date.now();
    try {
      execFileSync('npm', ['install', '--silent', '--no-audit', '--no-fund', '--no-save', '--prefix', cache, `node@${pinned}`], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    } catch (error) {
      process.stderr.write(
        `with-node: installing node@${pinned} failed (${error.message.split('\n')[0]}); check the network, or put Node ${minimum} or later first on PATH\n`,
      );
      process.exit(1);
    }
    process.stderr.write(`with-node: node@${pinned} is ready in ${cache} (${Math.round((Date.now() - started) / 1000)} s)\n`);
  }
}

if (printBin) {
  process.stdout.write(`${bin}\n`);
  process.exit(0);
}
const env = bin === '' ? process.env : { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };

// Signals: every SIGINT/SIGTERM/SIGHUP meant for the command reaches it exactly once, whoever sent it.
// A launcher cannot tell a signal sent to its process group (a terminal's Ctrl-C, `kill -INT -<pgid>`, a
// supervisor that kills the group) from one sent to its pid alone (`kill <pid>`, npm forwarding to its
// script, a container runtime signalling PID 1): Node does not expose the sender. So the launcher decides
// where the child lives, and with it which path a signal takes, so that only one path exists:
// - standard input is a terminal: the child stays in the launcher's process group, the terminal's
//   foreground group, so it keeps the terminal (watch modes read keys, Ctrl-Z stops it) and the kernel
//   delivers the terminal's Ctrl-C to it directly. The launcher forwards nothing: forwarding is what
//   delivered every Ctrl-C twice, and the second one cut the graceful stop short. (A `kill <pid>` of the
//   launcher alone is then not passed on: signal the group, as the terminal does, or the child's pid.)
// - npm runs the launcher (npm start, npm test...): the same, for the same reason. npm forwards every
//   SIGINT/SIGTERM it receives to its script, and package.json's scripts `exec` the launcher so that the
//   script is the launcher itself: a group signal then reaches the launcher twice (the kernel's copy and
//   npm's), and only the child's own copy, from the kernel, counts. Without `exec`, npm's `sh -c` sat in
//   the group too, and Debian's dash, hit by the Ctrl-C while it waited, exited 130 after the service's 0:
//   npm then reported 130. (A signal to npm's pid alone stops at the launcher: signal the group.)
// - otherwise (a supervisor, CI, a test): the child gets a process group of its own (detached), so no
//   group signal can reach it past the launcher, and the launcher forwards each signal it receives, once.
//   A signal sent to the launcher's group reaches the launcher once and the child once, through it.
// Either way the launcher itself outlives the signal: it exits with the child's status, after the child.
// (A launcher killed outright, SIGKILL, cannot pass anything on: a detached child then runs on, as any
// process whose supervisor died; signal its own process group.)
const detached = !process.stdin.isTTY && process.env.npm_lifecycle_event === undefined;
const child = spawn(command, rest, { stdio: 'inherit', env, detached });
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
for (const signal of forwarded) {
  process.on(signal, () => {
    if (detached && child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (error) => {
  process.stderr.write(`with-node: ${command}: ${error.message}\n`);
  process.exit(127);
});
// A child ended by a signal: the shell convention 128 + its number (SIGINT 130, SIGTERM 143).
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 0)));
