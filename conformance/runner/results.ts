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

export function columnId(column: Column): string {
  return `${column.transport}/${column.driver}/${column.backend}`;
}

export function writeResults(file: ResultsFile, path: string = RESULTS_PATH): void {
  mkdirSync(fileURLToPath(new URL('.', `file://${path}`)), { recursive: true });
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`);
}
