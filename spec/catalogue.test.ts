import { describe, expect, test } from 'vitest';
import { ALL_CASES } from '../conformance/cases/index.ts';
import { caseApis, type Case } from '../conformance/case-model.ts';
import { loadKnownFailing } from '../conformance/runner/known-failing.ts';
import { findUnitCases } from '../conformance/unit-rules.ts';
import { loadRules } from './catalogue.ts';

/**
 * The catalogue and the cases must agree: every rule is checked by at least one case, every case
 * names only rules that exist, and a rule is checked where it applies (a gRPC rule by a case that
 * runs on the gRPC driver, a process rule by a process case).
 */
const rules = loadRules();
const ruleIds = new Set(rules.map((r) => r.id));

const UNIT_CASES = findUnitCases();

/** Conformance cases, plus rule-tagged unit tests as process cases (they check core objects). */
function coveringCases(id: string): Pick<Case, 'name' | 'kind'>[] {
  const unit = UNIT_CASES.filter((u) => u.rules.includes(id)).map((u) => ({ name: `${u.file}: ${u.name}`, kind: 'process' as const }));
  return [...ALL_CASES.filter((c) => c.rules.includes(id)), ...unit];
}

describe('spec/rules.yaml', () => {
  test('has entries for sections 1-9', () => {
    const sections = new Set(rules.map((r) => r.section.split(/[ .]/)[0]));
    expect([...sections].sort()).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
  });

  test('every "not shown" entry says what was chosen', () => {
    const chosen = rules.filter((r) => r.chosen !== undefined);
    expect(chosen.length).toBeGreaterThan(20);
    for (const rule of chosen) expect(rule.chosen, rule.id).not.toBe('');
  });

  test.each(rules.map((r) => [r.id, r] as const))('%s has a conformance case', (id, rule) => {
    const covering = coveringCases(id);
    expect(
      covering.map((c) => c.name),
      `${id} (${rule.section}: ${rule.statement}) has no conformance case`,
    ).not.toEqual([]);
    if (rule.applies === 'grpc') {
      expect(
        covering.some((c) => c.kind === 'process' || caseApis(c as Case).includes('grpc')),
        `${id} applies to gRPC but no case runs on the gRPC driver`,
      ).toBe(true);
    }
    if (rule.applies === 'http') {
      expect(
        covering.some((c) => c.kind !== 'process' && caseApis(c as Case).includes('rest')),
        `${id} applies to HTTP but no case runs on a REST driver`,
      ).toBe(true);
    }
    if (rule.applies === 'process') {
      expect(
        covering.some((c) => c.kind === 'process'),
        `${id} is a process rule but no process case checks it`,
      ).toBe(true);
    }
  });
});

describe('conformance cases', () => {
  test('names are unique kebab-case', () => {
    const names = ALL_CASES.map((c) => c.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    for (const name of names) expect(name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  test.each(ALL_CASES.map((c) => [c.name, c] as const))('%s names only catalogued rules', (_name, c) => {
    expect(c.rules.length).toBeGreaterThan(0);
    expect(c.rules.filter((id) => !ruleIds.has(id))).toEqual([]);
  });

  test('rule-tagged unit tests name only catalogued rules', () => {
    expect(UNIT_CASES.length).toBeGreaterThan(0);
    expect(UNIT_CASES.flatMap((u) => u.rules.filter((id) => !ruleIds.has(id)).map((id) => `${u.file}: ${id}`))).toEqual([]);
  });

  test('every non-process case runs on at least one API', () => {
    expect(ALL_CASES.filter((c) => c.kind !== 'process' && caseApis(c).length === 0).map((c) => c.name)).toEqual([]);
  });

  test('known-failing entries name catalogued rules and give a reason', () => {
    for (const entry of loadKnownFailing()) {
      if (!entry.rule.includes('*')) expect(ruleIds.has(entry.rule), `${entry.rule} is not in the catalogue`).toBe(true);
      expect(entry.reason.length).toBeGreaterThan(0);
    }
  });
});
