#!/usr/bin/env node
// Turns Stryker's JSON reports (reports/mutation/<set>/mutation.json, one per mutation set, written by
// `npm run mutation`) into one score per folder of src/ and writes the table into reports/mutation/scores.md,
// between its two markers. `--check` also exits 1 when a folder in the report scores below its threshold, `--floor` below its CI floor (the thresholds
// below, docs/mutation-testing.md); `--no-write` prints the table only; paths read those reports instead.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SETS } from '../mutation-sets.ts';

const REPORTS = fileURLToPath(new URL('../reports/mutation/', import.meta.url));
const SURVIVORS_PATH = fileURLToPath(new URL('../reports/mutation/survivors.md', import.meta.url));
const SCORES_PATH = fileURLToPath(new URL('../reports/mutation/scores.md', import.meta.url));
const START = '<!-- mutation-scores:start -->';
const END = '<!-- mutation-scores:end -->';

/** Minimum score (%) per folder; a folder not listed, and the overall score, use DEFAULT_THRESHOLD. */
const THRESHOLDS: Readonly<Record<string, number>> = {
  'src/domain': 90,
  'src/service': 90,
  'src/session': 90,
  'src/transports': 90,
  'src/adapters': 80,
};
const DEFAULT_THRESHOLD = 80;

/**
 * What CI holds each folder to (`--floor`, npm run mutation:ci): the committed baseline's score, rounded
 * down, for folders still below their threshold; a drop below it fails the build, and each survivor
 * killed lets it be raised. A folder not listed is held to its threshold.
 */
const FLOORS: Readonly<Record<string, number>> = {
  // Every folder run so far meets its threshold (src/service since the tests of 2026-11-26 evening, 97.9%).
};

/** Mutant statuses of the mutation-testing-report-schema. */
type Status = 'Killed' | 'Survived' | 'NoCoverage' | 'Timeout' | 'CompileError' | 'RuntimeError' | 'Ignored' | 'Pending';

interface Mutant {
  readonly status: Status;
  readonly mutatorName?: string;
  readonly replacement?: string;
  readonly location?: { readonly start: { readonly line: number; readonly column: number } };
}

interface Report {
  readonly files: Readonly<Record<string, { readonly mutants: readonly Mutant[] }>>;
}

export interface FolderScore {
  readonly folder: string;
  readonly counts: Readonly<Record<Status, number>>;
  /** Mutants the score counts: all but Ignored and the invalid ones (CompileError, RuntimeError: the mutated program does not load, so no test result says anything about it). */
  readonly valid: number;
  /** (Killed + Timeout) / valid, in percent; undefined when nothing is valid. */
  readonly score: number | undefined;
}

const STATUSES: readonly Status[] = ['Killed', 'Survived', 'NoCoverage', 'Timeout', 'CompileError', 'RuntimeError', 'Ignored', 'Pending'];

/** A set with no report yet: never run, or stopped with this many mutants tested (its incremental file). */
export interface SetProgress {
  readonly set: string;
  readonly tested: number | undefined;
}

/** The sets without a report, and how far a stopped run of each got. */
function setProgress(): SetProgress[] {
  return Object.keys(SETS)
    .filter((set) => !existsSync(`${REPORTS}${set}/mutation.json`))
    .map((set) => {
      const incremental = `${REPORTS}${set}/stryker-incremental.json`;
      if (!existsSync(incremental)) return { set, tested: undefined };
      const { files } = JSON.parse(readFileSync(incremental, 'utf8')) as Report;
      return { set, tested: Object.values(files).reduce((sum, file) => sum + file.mutants.length, 0) };
    });
}

/**
 * The lines under the table naming the sets it leaves out, so a folder two sets share (src/transports) is
 * not read as complete: those never run, and those a stopped run got part way through (Stryker keeps the
 * mutants it tested in the incremental file, and the set's next run resumes from there).
 */
export function notYetScored(progress: readonly SetProgress[]): string {
  const names = (sets: readonly SetProgress[], count: boolean) =>
    sets.map((p) => `\`${p.set}\`${count ? ` (${String(p.tested)} mutants tested)` : ''}`).join(', ');
  const stopped = progress.filter((p) => p.tested !== undefined);
  const never = progress.filter((p) => p.tested === undefined);
  return [
    stopped.length > 0 ? `\n\nStopped part way, resumed by their next run, not in the table yet: ${names(stopped, true)}.` : '',
    never.length > 0 ? `\n\nNot run yet: ${names(never, false)} (mutation-sets.ts).` : '',
  ].join('');
}

/**
 * `src/domain/order.ts` → `src/domain`, `packages/one-port-grpc/private/wire.ts` → `packages/one-port-grpc`;
 * a file directly in src/ is its own folder `src`.
 */
export function folderOf(file: string): string {
  const parts = file.replaceAll('\\', '/').split('/');
  const pkg = parts.indexOf('packages');
  if (pkg !== -1 && parts.length - pkg > 2) return `packages/${parts[pkg + 1]!}`;
  const at = parts.indexOf('src');
  return at === -1 || parts.length - at <= 2 ? 'src' : `src/${parts[at + 1]!}`;
}

function scoreOf(folder: string, statuses: readonly Status[]): FolderScore {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, statuses.filter((x) => x === s).length])) as Record<Status, number>;
  const valid = statuses.length - counts.Ignored - counts.CompileError - counts.RuntimeError;
  return { folder, counts, valid, score: valid === 0 ? undefined : (100 * (counts.Killed + counts.Timeout)) / valid };
}

/** The reports of every set run so far: reports/mutation/<set>/mutation.json. */
function setReports(): string[] {
  return readdirSync(REPORTS, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(`${REPORTS}${entry.name}/mutation.json`))
    .map((entry) => `${REPORTS}${entry.name}/mutation.json`)
    .sort();
}

/** The sets' reports as one: each file of src/ is mutated by exactly one set. */
export function merged(reports: readonly Report[]): Report {
  const files: Record<string, Report['files'][string]> = {};
  for (const report of reports)
    for (const [file, result] of Object.entries(report.files)) {
      if (files[file] !== undefined) throw new Error(`${file} is in two mutation reports: a file belongs to one set (mutation-sets.ts)`);
      files[file] = result;
    }
  return { files };
}

/** One row per folder, sorted, then the overall row (`all`). */
export function scoresOf(report: Report): FolderScore[] {
  const byFolder = new Map<string, Status[]>();
  for (const [file, result] of Object.entries(report.files)) {
    const list = byFolder.get(folderOf(file)) ?? [];
    list.push(...result.mutants.map((m) => m.status));
    byFolder.set(folderOf(file), list);
  }
  const rows = [...byFolder.keys()].sort().map((folder) => scoreOf(folder, byFolder.get(folder)!));
  return [...rows, scoreOf('all', [...byFolder.values()].flat())];
}

export function thresholdOf(folder: string): number {
  return THRESHOLDS[folder] ?? DEFAULT_THRESHOLD;
}

export function floorOf(folder: string): number {
  return Math.min(FLOORS[folder] ?? thresholdOf(folder), thresholdOf(folder));
}

const percent = (score: number | undefined): string => (score === undefined ? 'n/a' : `${score.toFixed(1)}%`);

export function renderTable(rows: readonly FolderScore[]): string {
  const lines = [
    '| Folder | Mutants | Killed | Timeout | Survived | No coverage | Equivalent (disabled) | Invalid | Score | Threshold | CI floor |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => {
      const total = STATUSES.reduce((sum, s) => sum + r.counts[s], 0);
      const name = r.folder === 'all' ? '**all of the above**' : `\`${r.folder}\``;
      return `| ${name} | ${total} | ${r.counts.Killed} | ${r.counts.Timeout} | ${r.counts.Survived} | ${r.counts.NoCoverage} | ${r.counts.Ignored} | ${r.counts.CompileError + r.counts.RuntimeError} | ${percent(r.score)} | ${thresholdOf(r.folder)}% | ${floorOf(r.folder)}% |`;
    }),
  ];
  return lines.join('\n');
}

/**
 * Every mutant no test failed (Survived, NoCoverage), file by file: the to-do list of triage
 * (reports/mutation/survivors.md); each is to be killed by a test or marked equivalent where it lives.
 */
export function survivorsOf(report: Report): string {
  const lines = [
    '# Mutation survivors',
    '',
    "Written by `npm run mutation:scores` from the sets' reports; see triage.md for what is known of them.",
    '',
  ];
  for (const [file, result] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
    const left = result.mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage');
    if (left.length === 0) continue;
    lines.push(`## ${file} (${left.length})`, '');
    const at = (m: Mutant) => (m.location === undefined ? 0 : m.location.start.line * 10_000 + m.location.start.column);
    for (const m of [...left].sort((a, b) => at(a) - at(b))) {
      const where = m.location === undefined ? '?' : `${m.location.start.line}:${m.location.start.column}`;
      const replacement = (m.replacement ?? '').replaceAll('\n', ' ').replaceAll('`', "'").slice(0, 100);
      lines.push(`- ${where} ${m.mutatorName ?? '?'}${m.status === 'NoCoverage' ? ' (no coverage)' : ''}: \`${replacement}\``);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** The scores page with the table between the markers (which must exist, once each). */
export function withTable(readme: string, table: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start === -1 || end < start) throw new Error(`reports/mutation/scores.md has no ${START} … ${END} block`);
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  // Reports may be named, e.g. one set's (npm run mutation:ci) or the incremental file of a stopped run.
  const named = argv.filter((arg) => !arg.startsWith('--'));
  const paths = named.length > 0 ? named : setReports();
  const report = merged(paths.map((path) => JSON.parse(readFileSync(path, 'utf8')) as Report));
  const rows = scoresOf(report);
  const table = named.length === 0 ? `${renderTable(rows)}${notYetScored(setProgress())}` : renderTable(rows);
  process.stdout.write(`${table}\n`);
  if (!argv.includes('--no-write')) {
    writeFileSync(SCORES_PATH, withTable(readFileSync(SCORES_PATH, 'utf8'), table));
    writeFileSync(SURVIVORS_PATH, survivorsOf(report));
    process.stdout.write('written: reports/mutation/scores.md, reports/mutation/survivors.md\n');
  }
  // --check: every folder at its threshold; --floor: none below what CI holds it to (FLOORS).
  const bound = argv.includes('--check') ? thresholdOf : argv.includes('--floor') ? floorOf : undefined;
  if (bound !== undefined) {
    const low = rows.filter((r) => r.score !== undefined && r.score < bound(r.folder));
    for (const r of low) process.stderr.write(`mutation: ${r.folder} scores ${percent(r.score)}, below its ${bound(r.folder)}%\n`);
    process.exitCode = low.length > 0 ? 1 : 0;
  }
}
