#!/usr/bin/env node
// The README-runner: every `sh` block of README.md and then of each docs/*.md (in name order), run as a new
// reader would, each file top to bottom in its own bash session, in a fresh clone with the system Node first
// on PATH, against the machine's Postgres/Redis/NATS (docs/testing.md "The README runner" documents the
// markers). Hand-written on purpose: a Markdown library would parse the fences no better than the two
// regular expressions below, and the runner must show exactly which line it ran.
//
// Not every block can run here, and each exception is a marker the output names with its reason:
// - `ci-step <step>`: .ci/run runs that command as a step of its own (the suites, the cluster, the image:
//   minutes each, some needing Docker or a quiet machine). Running it again here would double CI's time;
//   instead the runner checks that .ci/run still has exactly that step.
// - `skip <reason>`: a measurement (minutes of load), a night-long job, a host the reader fills in.
// - `needs <command>`: runs only where that tool is installed.
// Every block, run or not, is first checked statically: each `npm run <script>` names a script of
// package.json, and no line runs TypeScript with the system Node or a bare npx (both fail on Node 20).
//   npm run readme                          clone HEAD into a temporary directory and run it there
//   npm run readme -- --here                run in this checkout (uncommitted edits included; leaves node_modules)
//   npm run readme -- --only docs/api.md    only these files (repeatable; README.md first if named)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  | { readonly kind: 'ci-step'; readonly line: number; readonly text: string; readonly step: string }
  | { readonly kind: 'ctrl-c'; readonly line: number };

const MARKER = /^<!-- readme-runner: (serve|ctrl-c|needs|skip|ci-step)\b\s*(.*?)\s*-->$/;

/** A document's `sh` blocks and markers, in order. A marker that is not understood is an error, never ignored. */
export function parseReadme(markdown: string, file = 'README.md'): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let pending: { kind: string; arg: string; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('<!-- readme-runner')) {
      const match = MARKER.exec(line.trim());
      if (match === null) throw new Error(`${file}:${i + 1}: unknown readme-runner marker: ${line}`);
      const [, kind = '', arg = ''] = match;
      if (kind === 'ctrl-c') blocks.push({ kind: 'ctrl-c', line: i + 1 });
      else if (arg === '') throw new Error(`${file}:${i + 1}: ${kind} needs an argument`);
      else pending = { kind, arg, line: i + 1 };
      continue;
    }
    if (!/^```/.test(line)) continue;
    const fenceStart = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    if (line.trim() !== '```sh') {
      if (pending !== undefined) throw new Error(`${file}:${pending.line}: a marker above a block that is not \`sh\``);
      continue;
    }
    const text = body.join('\n');
    const at = fenceStart + 1;
    if (pending === undefined) blocks.push({ kind: 'run', line: at, text });
    else if (pending.kind === 'serve') blocks.push({ kind: 'serve', line: at, text, url: pending.arg });
    else if (pending.kind === 'needs') blocks.push({ kind: 'run', line: at, text, needs: pending.arg });
    else if (pending.kind === 'ci-step') blocks.push({ kind: 'ci-step', line: at, text, step: pending.arg });
    else blocks.push({ kind: 'skip', line: at, text, reason: pending.arg });
    pending = undefined;
  }
  if (pending !== undefined) throw new Error(`${file}:${pending.line}: marker without a block below it`);
  return blocks;
}

/** npm's own commands that name no script (npm test and npm start do: they run package.json's scripts). */
const NPM_BUILTINS = new Set(['ci', 'install', 'ls', 'exec', 'version', 'view']);

/**
 * What can be wrong with a document's blocks without running them: an `npm run <script>` that package.json
 * lacks, TypeScript run by the system Node or a bare npx (both fail on Node 20), a ci-step that .ci/run does
 * not run, a serve without its ctrl-c. One message per problem, `file:line: ...`.
 */
export function staticProblems(file: string, blocks: readonly Block[], scripts: ReadonlySet<string>, ciRun: string): string[] {
  const problems: string[] = [];
  const ciSteps = new Set(
    ciRun
      .split('\n')
      .map((line) => /^step (.*)$/.exec(line.trim())?.[1]?.trim())
      .filter((step): step is string => step !== undefined),
  );
  let running = 0;
  for (const block of blocks) {
    const at = `${file}:${block.line}`;
    if (block.kind === 'ctrl-c') {
      if (running-- !== 1) problems.push(`${at}: ctrl-c with no server running`);
      continue;
    }
    if (block.kind === 'serve' && ++running !== 1) problems.push(`${at}: a server is already running`);
    if (block.kind === 'ci-step' && !ciSteps.has(block.step)) problems.push(`${at}: .ci/run has no step \`${block.step}\``);
    for (const raw of block.text.split('\n')) {
      const line = raw.replace(/(^|\s)#.*$/, '');
      if (/(^|[|;&(]\s*)(node\s+\S+\.ts|npx\s)/.test(line))
        problems.push(`${at}: runs TypeScript or npx with the system Node: ${raw.trim()}`);
      for (const match of line.matchAll(/\bnpm\s+(?:run(?:-script)?\s+)?(?:(?:-s|--silent)\s+)?([\w:.-]+)/g)) {
        const name = match[1] ?? '';
        const isRun = /\bnpm\s+run/.test(match[0]);
        if ((isRun || !NPM_BUILTINS.has(name)) && !scripts.has(name)) problems.push(`${at}: package.json has no script \`${name}\``);
      }
    }
  }
  if (running !== 0) problems.push(`${file}: a server is still running at the end of the file`);
  return problems;
}

/** Single quotes for bash. */
const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** One bash script for a whole document: its blocks share the session (variables, exports), as in a terminal. */
export function buildScript(blocks: readonly Block[], logDir: string, file = 'README.md'): string {
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
    // A block that fails ends the script (set -e) with its server running: stop that server's group too.
    '__rr_cleanup() { if [ -n "${__rr_pid:-}" ]; then kill -KILL -- "-$__rr_pid" 2>/dev/null || true; fi; }',
    'trap __rr_cleanup EXIT',
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
    const header = `::readme-runner:: ${file}:${block.line}`;
    if (block.kind === 'skip') {
      out.push(`printf '\\n%s\\n' ${quote(`${header} skipped: ${block.reason}`)}`);
    } else if (block.kind === 'ci-step') {
      out.push(
        `printf '\\n%s\\n' ${quote(`${header} not run: .ci/run runs \`${block.step}\` as a step of its own (checked: the step is there)`)}`,
      );
    } else if (block.kind === 'ctrl-c') {
      out.push(`printf '\\n%s\\n' ${quote(`${header} ctrl-c`)}`, '__rr_ctrlc');
    } else if (block.kind === 'serve') {
      const lines = block.text.split('\n').filter((l) => l.trim() !== '');
      const server = lines.pop() ?? '';
      servers += 1;
      out.push(
        `printf '\\n%s\\n' ${quote(`${header} serve`)}`,
        ...lines,
        `__rr_serve ${quote(block.url)} ${quote(join(logDir, `server-${file.replace(/[^\w.-]/g, '_')}-${servers}.log`))} ${quote(server)}`,
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
    `if [ -n "\${__rr_pid:-}" ]; then echo "readme-runner: a server is still running at the end of ${file}"; kill -KILL -- "-$__rr_pid"; exit 1; fi`,
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

/** The documents the runner checks, in the order it runs them: README.md, then docs/*.md by name. */
export function documents(dir: string): string[] {
  const docs = readdirSync(join(dir, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Runs one document's script; its output goes to this process's and is returned. */
async function runDocument(
  scriptPath: string,
  dir: string,
  env: Record<string, string>,
): Promise<{ status: number | null; output: string }> {
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
  return { status, output };
}

function option(name: string): string[] {
  return process.argv.flatMap((arg, i) => (arg === name && process.argv[i + 1] !== undefined ? [process.argv[i + 1] as string] : []));
}

async function main(): Promise<number> {
  const started = Date.now();
  const here = process.argv.includes('--here');
  const only = option('--only');
  for (const port of [8080, 8081]) {
    if (!(await portFree(port))) {
      process.stderr.write(`readme-runner: port ${port} is taken; the documents' commands use it (stop what holds it)\n`);
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

  const files = documents(dir).filter((file) => only.length === 0 || only.includes(file));
  const scripts = new Set(Object.keys((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: object }).scripts));
  const ciRun = readFileSync(join(dir, '.ci/run'), 'utf8');
  const parsed = files.map((file) => ({ file, blocks: parseReadme(readFileSync(join(dir, file), 'utf8'), file) }));
  const problems = parsed.flatMap(({ file, blocks }) => staticProblems(file, blocks, scripts, ciRun));
  if (problems.length > 0) {
    process.stderr.write(`readme-runner: FAILED before running anything:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
    return 1;
  }

  // Only what a reader's shell has: no test-run variables (POSTGRES_SCHEMA and the like) leak in.
  const env: Record<string, string> = { PATH, HOME: process.env['HOME'] ?? '/root', TERM: 'dumb', LANG: process.env['LANG'] ?? 'C.UTF-8' };
  for (const name of ['XDG_CACHE_HOME', 'npm_config_cache', 'CHROMIUM_PATH'])
    if (process.env[name] !== undefined) env[name] = process.env[name] as string;
  env['npm_config_update_notifier'] = 'false';
  env['npm_config_fund'] = 'false';
  env['npm_config_audit'] = 'false';

  const summary: string[] = [];
  const failures: string[] = [];
  let total = 0;
  for (const { file, blocks } of parsed) {
    total += blocks.length;
    const scriptPath = join(work, `${file.replace(/[^\w.-]/g, '_')}.sh`);
    writeFileSync(scriptPath, buildScript(blocks, work, file));
    const fileStarted = Date.now();
    process.stdout.write(`\nreadme-runner: ${file}: ${blocks.length} blocks and markers\n`);
    const { status, output } = await runDocument(scriptPath, dir, env);
    const seconds = Math.round((Date.now() - fileStarted) / 1000);
    const lines = output
      .split('::readme-runner:: ')
      .slice(1)
      .map((section) => section.split('\n')[0] ?? '');
    summary.push(`${file} (${seconds} s)`, ...lines.map((line) => `  ${line}`));
    const bodies = errorBodies(output);
    if (status !== 0 || bodies.length > 0)
      failures.push(
        `${file}: at ${lines.at(-1) ?? 'the start'} (exit ${String(status)})${bodies.length > 0 ? `; Error bodies: ${bodies.join(' | ')}` : ''}`,
      );
    // A document that failed may have left a server on the ports the next one needs.
    if (status !== 0 && (!(await portFree(8080)) || !(await portFree(8081)))) {
      failures.push(`${file}: left :8080 or :8081 taken; the documents after it were not run`);
      break;
    }
  }

  const ran = summary.filter((s) => / (run|serve|ctrl-c)$/.test(s)).length;
  const notRun = summary.filter((s) => / (skipped|not run): /.test(s)).length;
  const seconds = Math.round((Date.now() - started) / 1000);
  process.stdout.write(`\nreadme-runner: summary\n${summary.join('\n')}\n`);
  if (failures.length > 0) {
    process.stderr.write(`readme-runner: FAILED (${seconds} s):\n${failures.map((f) => `  ${f}`).join('\n')}\nlogs in ${work}\n`);
    return 1;
  }
  if (!here) rmSync(work, { recursive: true, force: true });
  process.stdout.write(
    `readme-runner: passed in ${seconds} s: ${files.length} document(s), ${ran} blocks and markers ran, ${notRun} not run (reasons above), of ${total}\n`,
  );
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
