import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../test/support/transports.ts';

/**
 * Core objects are checked by unit tests with vitest's expect, next to the code. A unit test whose
 * name starts with `[RULE-ID, …]` is a conformance case for those rules (the `core/unit` column):
 * the catalogue counts it, and `npm run conformance` runs it and reports it per rule.
 */
export interface UnitCase {
  readonly file: string;
  readonly name: string;
  readonly rules: readonly string[];
}

const TAGGED = /\b(?:it|test)\(\s*'\[([A-Za-z0-9][A-Za-z0-9, -]*)\] ([^']*)'/g;
// test/cluster: run by npm run test:cluster (needs haproxy), counted here, reported by the matrix as not run.
// embedded: the embedded ring's own tests (the simulator, the console).
// explore: the deterministic fleet simulation (npm run explore), whose invariants are EXPLORE-* rules.
// speed: the opt-in speed ring (speed/README.md), whose tests show the rules its mechanisms keep.
// fakes and test/differential: the in-memory backends' shapes and their check against the real ones (FAKE-* rules).
const ROOTS = ['src', 'speed', 'embedded', 'packages', 'conformance', 'test/cluster', 'explore', 'fakes', 'test/differential'];

function testFiles(dir: string): string[] {
  // speed/ is opt-in: a copy without it still counts the rest.
  if (!existsSync(join(REPO_ROOT, dir))) return [];
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'gen' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

export function rulesOfTitle(title: string): string[] | undefined {
  const match = /^\[([^\]]+)\] /.exec(title);
  return match?.[1]?.split(',').map((id) => id.trim());
}

export function findUnitCases(): UnitCase[] {
  return ROOTS.flatMap(testFiles).flatMap((file) =>
    [...readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(TAGGED)].map((m) => ({
      file: relative(REPO_ROOT, join(REPO_ROOT, file)),
      name: m[2]!,
      rules: rulesOfTitle(`[${m[1]!}] `)!,
    })),
  );
}
