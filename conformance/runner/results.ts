import { mkdirSync, writeFileSync } from 'node:fs';
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

export const RESULTS_PATH = fileURLToPath(new URL('../../reports/conformance-results.json', import.meta.url));

/** vitest's JSON report of a run that included the rule-tagged unit tests (the core/unit column). */
export const UNIT_RESULTS_PATH = fileURLToPath(new URL('../../reports/conformance-unit.json', import.meta.url));

interface VitestJson {
  readonly testResults: readonly { readonly name: string; readonly assertionResults: readonly { readonly title: string; readonly status: string; readonly failureMessages?: readonly string[]; readonly duration?: number | null }[] }[];
}

/** The rule-tagged unit tests of a vitest JSON report as one more column of results. */
export function withUnitResults(file: ResultsFile, json: VitestJson, rulesOfTitle: (title: string) => string[] | undefined): ResultsFile {
  const column: Column = { transport: 'core', driver: 'unit', backend: 'fake' };
  const results: CaseResult[] = [];
  for (const testFile of json.testResults) {
    if (testFile.name.endsWith('conformance.test.ts')) continue;
    for (const test of testFile.assertionResults) {
      const rules = rulesOfTitle(test.title);
      if (rules === undefined) continue;
      const outcome: Outcome = test.status === 'passed' ? 'pass' : test.status === 'failed' ? 'fail' : 'skip';
      const name = test.title.slice(test.title.indexOf('] ') + 2);
      results.push({ id: `${rules.join('+')}/core/unit/fake/${name}`, rules, ...column, case: name, outcome, ms: Math.round(test.duration ?? 0), ...(outcome === 'fail' ? { detail: (test.failureMessages ?? []).join('\n').slice(0, 500) } : {}) });
    }
  }
  return results.length === 0 ? file : { ...file, columns: [...file.columns, column], results: [...file.results, ...results] };
}

export function columnId(column: Column): string {
  return `${column.transport}/${column.driver}/${column.backend}`;
}

export function writeResults(file: ResultsFile, path: string = RESULTS_PATH): void {
  mkdirSync(fileURLToPath(new URL('.', `file://${path}`)), { recursive: true });
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
}
