import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { CaseResult } from './results.ts';

export interface KnownFailing {
  readonly rule: string;
  readonly transport: string;
  readonly backend: string;
  readonly driver: string;
  readonly case: string;
  readonly reason: string;
}

export const KNOWN_FAILING_PATH = new URL('../known-failing.yaml', import.meta.url);

function glob(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

export function loadKnownFailing(text: string = readFileSync(KNOWN_FAILING_PATH, 'utf8')): KnownFailing[] {
  const doc = (parse(text) ?? {}) as { known_failing?: unknown };
  const list = doc.known_failing ?? [];
  if (!Array.isArray(list)) throw new Error('known-failing.yaml: known_failing must be a list');
  return list.map((raw: unknown, index) => {
    // driver and case default to every driver and every case.
    const entry = { driver: '*', case: '*', ...(raw ?? {}) } as Record<string, unknown>;
    for (const field of ['rule', 'transport', 'backend', 'driver', 'case', 'reason'] as const) {
      if (typeof entry[field] !== 'string' || entry[field] === '')
        throw new Error(`known-failing.yaml entry ${index + 1}: ${field} is required`);
    }
    return entry as unknown as KnownFailing;
  });
}

/** Where a result stands: its column plus its rules and case. */
export type TestCoordinates = Pick<CaseResult, 'rules' | 'transport' | 'driver' | 'backend' | 'case'>;

export function findKnownFailing(entries: readonly KnownFailing[], at: TestCoordinates): KnownFailing | undefined {
  return entries.find(
    (e) =>
      at.rules.some((rule) => glob(e.rule).test(rule)) &&
      (['transport', 'driver', 'backend', 'case'] as const).every((k) => glob(e[k]).test(at[k])),
  );
}
