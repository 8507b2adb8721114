#!/usr/bin/env node
// The README-runner: every `sh` block of README.md, run top to bottom as a new reader would, in a fresh
// clone with the system Node first on PATH, against the machine's Postgres/Redis/NATS (README "Checking
// this README" documents the markers). Hand-written on purpose: a Markdown library would parse the fences
// no better than the two regular expressions below, and the runner must show exactly which line it ran.
//   npm run readme                  clone HEAD into a temporary directory and run it there
//   npm run readme -- --here        run in this checkout (uncommitted edits included; leaves node_modules)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The Node a fresh machine has (Debian bookworm): the README must work from it through the npm scripts. */
const OLD_NODE_MAJOR = 20;
/** A server's start-up (the first one includes `npm run setup`, an `npm ci`) and the whole run: hang guards only. */
const SERVE_GUARD_S = 600;
const RUN_GUARD_MS = 30 * 60_000;

export type Block =
  | { readonly kind: 'run'; readonly line: number; readonly text: string; readonly needs?: string }
  | { readonly kind: 'serve'; readonly line: number; readonly text: string; readonly url: string }
  | { readonly kind: 'skip'; readonly line: number; readonly text: string; readonly reason: string }
  | { readonly kind: 'ctrl-c'; readonly line: number };

const MARKER = /^<!-- readme-runner: (serve|ctrl-c|needs|skip)\b\s*(.*?)\s*-->$/;

/** The README's `sh` blocks and markers, in order. A marker that is not understood is an error, never ignored. */
export function parseReadme(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let pending: { kind: string; arg: string; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('<!-- readme-runner')) {
      const match = MARKER.exec(line.trim());
      if (match === null) throw new Error(`README.md:${i + 1}: unknown readme-runner marker: ${line}`);
      const [, kind = '', arg = ''] = match;
      if (kind === 'ctrl-c') blocks.push({ kind: 'ctrl-c', line: i + 1 });
      else if (arg === '') throw new Error(`README.md:${i + 1}: ${kind} needs an argument`);
      else pending = { kind, arg, line: i + 1 };
      continue;
    }
    if (!/^```/.test(line)) continue;
    const fenceStart = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    if (line.trim() !== '```sh') {
      if (pending !== undefined) throw new Error(`README.md:${pending.line}: a marker above a block that is not \`sh\``);
      continue;
    }
    const text = body.join('\n');
    const at = fenceStart + 1;
    if (pending === undefined) blocks.push({ kind: 'run', line: at, text });
    else if (pending.kind === 'serve') blocks.push({ kind: 'serve', line: at, text, url: pending.arg });
    else if (pending.kind === 'needs') blocks.push({ kind: 'run', line: at, text, needs: pending.arg });
    else blocks.push({ kind: 'skip', line: at, text, reason: pending.arg });
    pending = undefined;
  }
  if (pending !== undefined) throw new Error(`README.md:${pending.line}: marker without a block below it`);
  return blocks;
}

/** Single quotes for bash. */
const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** One bash script for the whole README: blocks share the session (variables, exports), as in a terminal. */
export function buildScript(blocks: readonly Block[], logDir: string): string {
  const out: string[] = [
    'set -eo pipefail',
    // serve: the last line as a shell job (setsid: its own session and process group, as a terminal gives
    // a job), output to a log; wait for the URL. ctrl-c: SIGINT to that group, then `stopped` in its log.
    '__rr_serve() {',
    '  local url=$1 log=$2 line=$3 deadline=$((SECONDS + ' + String(SERVE_GUARD_S) + '))',
    '  setsid bash -c "$line" </dev/null >"$log" 2>&1 &',
    '  __rr_pid=$! __rr_log=$log',
    '  until curl -sf -o /dev/null "$url"; do',
    '    if ! kill -0 "$__rr_pid" 2>/dev/null || [ $SECONDS -gt $deadline ]; then echo "readme-runner: server did not answer $url; its log:"; cat "$log"; return 1; fi',
    '    sleep 0.2',
    '  done',
    '  echo "readme-runner: serving ($url answers), log $log"',
    '}',
    '__rr_ctrlc() {',
    '  [ -n "${__rr_pid:-}" ] || { echo "readme-runner: ctrl-c with no server running"; return 1; }',
    '  kill -INT -- "-$__rr_pid"',
    '  local status=0; wait "$__rr_pid" || status=$?',
    '  tail -n 3 "$__rr_log"',
    '  grep -q \'"msg":"stopped"\' "$__rr_log" || { echo "readme-runner: no stopped line after Ctrl-C (status $status)"; return 1; }',
    '  echo "readme-runner: stopped (job status $status)"',
    '  __rr_pid=',
    '}',
  ];
  let servers = 0;
  for (const block of blocks) {
    const header = `::readme-runner:: README.md:${block.line}`;
    if (block.kind === 'skip') {
      out.push(`printf '\\n%s\\n' ${quote(`${header} skipped: ${block.reason}`)}`);
    } else if (block.kind === 'ctrl-c') {
      out.push(`printf '\\n%s\\n' ${quote(`${header} ctrl-c`)}`, '__rr_ctrlc');
    } else if (block.kind === 'serve') {
      const lines = block.text.split('\n').filter((l) => l.trim() !== '');
      const server = lines.pop() ?? '';
      servers += 1;
      out.push(
        `printf '\\n%s\\n' ${quote(`${header} serve`)}`,
        ...lines,
        `__rr_serve ${quote(block.url)} ${quote(join(logDir, `server-${servers}.log`))} ${quote(server)}`,
      );
    } else if (block.needs !== undefined) {
      out.push(
        `if command -v ${quote(block.needs)} >/dev/null; then`,
        `printf '\\n%s\\n' ${quote(`${header} run`)}`,
        block.text,
        'else',
        `printf '\\n%s\\n' ${quote(`${header} skipped: ${block.needs} is not installed`)}`,
        'fi',
      );
    } else {
      out.push(`printf '\\n%s\\n' ${quote(`${header} run`)}`, block.text);
    }
  }
  out.push(
    'if [ -n "${__rr_pid:-}" ]; then echo "readme-runner: a server is still running at the end of the README"; kill -KILL -- "-$__rr_pid"; exit 1; fi',
  );
  return `${out.join('\n')}\n`;
}

/** Output lines that are an Error body: the README's happy path shows none. */
export function errorBodies(output: string): string[] {
  return output.split('\n').filter((line) => line.startsWith('{"error":'));
}

/** PATH as on a machine where nothing but the system Node is installed: no pinned Node, no node_modules/.bin. */
function freshPath(): string {
  const rest = (process.env['PATH'] ?? '').split(delimiter).filter((dir) => !dir.includes('orders-node') && !dir.includes('node_modules'));
  return [...new Set(['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin', ...rest])].join(delimiter);
}

async function portFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

async function main(): Promise<number> {
  const here = process.argv.includes('--here');
  for (const port of [8080, 8081]) {
    if (!(await portFree(port))) {
      process.stderr.write(`readme-runner: port ${port} is taken; the README's commands use it (stop what holds it)\n`);
      return 1;
    }
  }
  const work = mkdtempSync(join(tmpdir(), 'readme-runner-'));
  const dir = here ? ROOT : join(work, 'orders');
  if (!here) {
    const clone = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', ROOT, dir], { stdio: 'inherit' });
    if (clone.status !== 0) return 1;
  }
  const PATH = freshPath();
  const node = spawnSync('node', ['--version'], { env: { ...process.env, PATH }, encoding: 'utf8' }).stdout.trim();
  process.stdout.write(`readme-runner: ${here ? 'this checkout' : `fresh clone of HEAD in ${dir}`}; first node on PATH: ${node}\n`);
  if (!node.startsWith(`v${OLD_NODE_MAJOR}.`))
    process.stdout.write(`readme-runner: warning: not Node ${OLD_NODE_MAJOR}; the old-Node path is not exercised\n`);

  const blocks = parseReadme(readFileSync(join(dir, 'README.md'), 'utf8'));
  const scriptPath = join(work, 'readme.sh');
  writeFileSync(scriptPath, buildScript(blocks, work));
  // Only what a reader's shell has: no test-run variables (POSTGRES_SCHEMA and the like) leak in.
  const env: Record<string, string> = { PATH, HOME: process.env['HOME'] ?? '/root', TERM: 'dumb', LANG: process.env['LANG'] ?? 'C.UTF-8' };
  for (const name of ['XDG_CACHE_HOME', 'npm_config_cache', 'CHROMIUM_PATH'])
    if (process.env[name] !== undefined) env[name] = process.env[name] as string;
  env['npm_config_update_notifier'] = 'false';
  env['npm_config_fund'] = 'false';
  env['npm_config_audit'] = 'false';

  const child = spawn('bash', [scriptPath], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const tee = (chunk: Buffer, to: NodeJS.WriteStream): void => {
    output += chunk.toString('utf8');
    to.write(chunk);
  };
  child.stdout.on('data', (chunk: Buffer) => tee(chunk, process.stdout));
  child.stderr.on('data', (chunk: Buffer) => tee(chunk, process.stderr));
  const guard = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), RUN_GUARD_MS);
  const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  clearTimeout(guard);

  const sections = output.split('::readme-runner:: ').slice(1);
  const summary = sections.map((section) => section.split('\n')[0] ?? '');
  process.stdout.write(`\nreadme-runner: summary\n${summary.map((s) => `  ${s}`).join('\n')}\n`);
  const bodies = errorBodies(output);
  const ran = summary.filter((s) => / (run|serve|ctrl-c)$/.test(s)).length;
  const skipped = summary.filter((s) => / skipped: /.test(s)).length;
  if (status !== 0 || bodies.length > 0) {
    process.stderr.write(
      `readme-runner: FAILED at ${summary.at(-1) ?? 'the start'} (exit ${String(status)})${bodies.length > 0 ? `; Error bodies: ${bodies.join(' | ')}` : ''}; logs in ${work}\n`,
    );
    return 1;
  }
  if (!here) rmSync(work, { recursive: true, force: true });
  process.stdout.write(`readme-runner: passed: ${ran} blocks and markers ran, ${skipped} skipped (reasons above), of ${blocks.length}\n`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
