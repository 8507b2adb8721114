import { describe, expect, test } from 'vitest';
import type { Rule } from '../../spec/catalogue.ts';
import { findKnownFailing, loadKnownFailing } from '../runner/known-failing.ts';
import type { CaseResult, ResultsFile } from '../runner/results.ts';
import { buildReport, renderHtml, renderMarkdown } from './render-report.ts';

const rules: Rule[] = [
  { id: 'A-ok', section: '1', statement: 'passes', applies: 'all' },
  { id: 'B-bad', section: '2', statement: 'fails on koa', applies: 'http' },
  { id: 'C-none', section: '3', statement: 'no case', applies: 'http' },
  { id: 'D-known', section: '4', statement: 'known failing', applies: 'http' },
];

const result = (rule: string, transport: string, outcome: CaseResult['outcome'], detail?: string): CaseResult => ({
  id: `${rule}/${transport}/rest-http1/fake/x`,
  rules: [rule],
  transport,
  driver: 'rest-http1',
  backend: 'fake',
  case: 'x',
  outcome,
  ms: 1,
  ...(detail === undefined ? {} : { detail }),
});

const file: ResultsFile = {
  startedAt: 't0',
  finishedAt: 't1',
  filters: {},
  columns: [
    { transport: 'stdlib', driver: 'rest-http1', backend: 'fake' },
    { transport: 'koa', driver: 'rest-http1', backend: 'fake' },
  ],
  notes: ['conformance: real backends not configured'],
  results: [
    result('A-ok', 'stdlib', 'pass'),
    result('A-ok', 'koa', 'pass'),
    result('B-bad', 'stdlib', 'pass'),
    result('B-bad', 'koa', 'fail', 'status 500, expected 404'),
    result('D-known', 'stdlib', 'xfail', 'tracked'),
  ],
};

describe('conformance report', () => {
  const report = buildReport(rules, new Set(['A-ok', 'B-bad', 'D-known']), file);

  test('one row per rule, one cell per column', () => {
    expect(report.rows.map((r) => [r.rule.id, ...r.cells])).toEqual([
      ['A-ok', 'pass', 'pass'],
      ['B-bad', 'pass', 'FAIL'],
      ['C-none', 'UNCOVERED', 'UNCOVERED'],
      ['D-known', 'xfail', 'n/a'],
    ]);
  });

  test('summary counts failing and uncovered rules and fails the run', () => {
    expect(report.summary).toBe('conformance: 4 rules, 1 FAIL, 1 UNCOVERED, 1 known-failing, 5 results in 2 columns');
    expect(report.failed).toBe(true);
  });

  test('failure details follow the table in both formats', () => {
    const md = renderMarkdown(report, file);
    expect(md).toContain('| B-bad | 2 | pass | FAIL |');
    expect(md).toContain('`B-bad/koa/rest-http1/fake/x`: status 500, expected 404');
    expect(md).toContain('- C-none');
    const html = renderHtml(report, file);
    expect(html).toContain('<td class="c-fail">FAIL</td>');
    expect(html).toContain('status 500, expected 404');
  });

  test('a clean run does not fail', () => {
    const clean = buildReport(rules.slice(0, 1), new Set(['A-ok']), { ...file, results: file.results.slice(0, 2) });
    expect(clean.failed).toBe(false);
    expect(clean.summary).toBe('conformance: 1 rules, 0 FAIL, 0 UNCOVERED, 2 results in 2 columns');
  });
});

describe('known-failing list', () => {
  const entries = loadKnownFailing(`known_failing:
  - rule: RATE-*
    transport: koa
    backend: "*"
    reason: tracked elsewhere
`);
  test('matches rule, transport and backend globs; driver and case default to any', () => {
    expect(
      findKnownFailing(entries, { rules: ['AUTH-1', 'RATE-429-body'], transport: 'koa', driver: 'rest-http1', backend: 'real', case: 'c' })
        ?.reason,
    ).toBe('tracked elsewhere');
    expect(
      findKnownFailing(entries, { rules: ['RATE-429-body'], transport: 'stdlib', driver: 'rest-http1', backend: 'fake', case: 'c' }),
    ).toBeUndefined();
    expect(
      findKnownFailing(entries, { rules: ['AUTH-1'], transport: 'koa', driver: 'rest-http1', backend: 'fake', case: 'c' }),
    ).toBeUndefined();
  });
  test('an entry without a reason is refused', () => {
    expect(() => loadKnownFailing('known_failing:\n  - rule: A\n    transport: koa\n    backend: fake\n')).toThrow(/reason is required/);
  });
});
