import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Outcome = 'pass' | 'fail' | 'xfail' | 'xpass' | 'skip';

export interface CaseResult {
  readonly id: string;
  readonly rules: readonly string[];
  readonly transport: string;
  readonly driver: string;
  readonly backend: string;
  readonly case: string;
  readonly outcome: Outcome;
  readonly ms: number;
  /** Failure text, skip reason or known-failing reason. */
  readonly detail?: string;
}

export interface Column {
  readonly transport: string;
  readonly driver: string;
  readonly backend: string;
}

export interface ResultsFile {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly filters: Readonly<Record<string, string>>;
  readonly columns: readonly Column[];
  /** One line each: transports not written yet, real backends not configured. */
  readonly notes: readonly string[];
  readonly results: readonly CaseResult[];
}

const ORDER = {
  transport: ['stdlib', 'koa', 'grpc', 'external', 'core'],
  backend: ['fake', 'real', 'spawned', 'external'],
  driver: ['rest-http1', 'rest-h2c', 'grpc', 'process', 'unit'],
} as const;
const rankIn = (list: readonly string[], value: string): number => (list.includes(value) ? list.indexOf(value) : list.length);

/** The report's column order, whatever order the slices finished in: by transport, then backend, then driver. */
function columnRank(c: Column): number {
  return rankIn(ORDER.transport, c.transport) * 100 + rankIn(ORDER.backend, c.backend) * 10 + rankIn(ORDER.driver, c.driver);
}

/** One results file per slice of the matrix (conformance/columns/*.test.ts), merged by readResults. */
export const RESULTS_DIR = fileURLToPath(new URL('../../reports/conformance-results/', import.meta.url));

export function resultsPathOf(slice: string): string {
  return join(RESULTS_DIR, `${slice}.json`);
}

/** Every slice's results of the last run as one file (columns in the order of the slices' names); undefined when none ran. */
export function readResults(dir: string = RESULTS_DIR): ResultsFile | undefined {
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : [];
  if (files.length === 0) return undefined;
  const parts = files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as ResultsFile);
  return {
    startedAt: parts.map((p) => p.startedAt).sort()[0]!,
    finishedAt: parts
      .map((p) => p.finishedAt)
      .sort()
      .at(-1)!,
    filters: Object.assign({}, ...parts.map((p) => p.filters)) as Record<string, string>,
    columns: parts.flatMap((p) => p.columns).sort((a, b) => columnRank(a) - columnRank(b)),
    notes: [...new Set(parts.flatMap((p) => p.notes))],
    results: parts.flatMap((p) => p.results),
  };
}

/** vitest's JSON report of a run that included the rule-tagged unit tests (the core/unit column). */
export const UNIT_RESULTS_PATH = fileURLToPath(new URL('../../reports/conformance-unit.json', import.meta.url));

interface VitestJson {
  readonly testResults: readonly {
    readonly name: string;
    readonly assertionResults: readonly {
      readonly title: string;
      readonly status: string;
      readonly failureMessages?: readonly string[];
      readonly duration?: number | null;
    }[];
  }[];
}

/** The rule-tagged unit tests of a vitest JSON report as one more column of results. */
export function withUnitResults(file: ResultsFile, json: VitestJson, rulesOfTitle: (title: string) => string[] | undefined): ResultsFile {
  const column: Column = { transport: 'core', driver: 'unit', backend: 'fake' };
  const results: CaseResult[] = [];
  for (const testFile of json.testResults) {
    if (testFile.name.includes('/conformance/columns/')) continue;
    for (const test of testFile.assertionResults) {
      const rules = rulesOfTitle(test.title);
      if (rules === undefined) continue;
      const outcome: Outcome = test.status === 'passed' ? 'pass' : test.status === 'failed' ? 'fail' : 'skip';
      const name = test.title.slice(test.title.indexOf('] ') + 2);
      results.push({
        id: `${rules.join('+')}/core/unit/fake/${name}`,
        rules,
        ...column,
        case: name,
        outcome,
        ms: Math.round(test.duration ?? 0),
        ...(outcome === 'fail' ? { detail: (test.failureMessages ?? []).join('\n').slice(0, 500) } : {}),
      });
    }
  }
  return results.length === 0 ? file : { ...file, columns: [...file.columns, column], results: [...file.results, ...results] };
}

export function columnId(column: Column): string {
  return `${column.transport}/${column.driver}/${column.backend}`;
}

export function writeResults(file: ResultsFile, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
}
