import type { Rule } from '../../spec/catalogue.ts';
import { columnId, type CaseResult, type Column, type ResultsFile } from '../runner/results.ts';
import { BLACK_BOX_LACKS, type Capability } from '../targets/target.ts';

const BLACK_BOX = new Set(['spawned', 'external']);

/** Each case skipped on a black-box column, once, with what it needs and why such a target lacks it. */
export function blackBoxSkips(results: readonly CaseResult[]): string[] {
  const needs = new Map<string, Set<string>>();
  for (const r of results) {
    if (r.outcome !== 'skip' || !BLACK_BOX.has(r.backend)) continue;
    const caps = /^needs (.+)$/.exec(r.detail ?? '')?.[1]?.split(', ') ?? [r.detail ?? ''];
    needs.set(r.case, new Set([...(needs.get(r.case) ?? []), ...caps]));
  }
  return [...needs].map(
    ([name, caps]) => `\`${name}\`: ${[...caps].map((cap) => `${cap} (${BLACK_BOX_LACKS[cap as Capability] ?? cap})`).join('; ')}`,
  );
}

/** A cell of the rule × column table. */
export type Cell = 'pass' | 'FAIL' | 'xfail' | 'skip' | 'n/a' | 'UNCOVERED';

export interface RuleRow {
  readonly rule: Rule;
  readonly cells: readonly Cell[];
}

export interface Report {
  readonly columns: readonly Column[];
  readonly rows: readonly RuleRow[];
  readonly failing: readonly CaseResult[];
  readonly knownFailing: readonly CaseResult[];
  readonly skipped: readonly CaseResult[];
  readonly uncovered: readonly string[];
  /** Rules with cases of which none ran anywhere in this run (filters, capabilities). */
  readonly notRun: readonly string[];
  readonly summary: string;
  readonly failed: boolean;
}

function cellFor(results: readonly CaseResult[]): Cell {
  if (results.some((r) => r.outcome === 'fail' || r.outcome === 'xpass')) return 'FAIL';
  if (results.some((r) => r.outcome === 'xfail')) return 'xfail';
  if (results.some((r) => r.outcome === 'pass')) return 'pass';
  if (results.some((r) => r.outcome === 'skip')) return 'skip';
  return 'n/a';
}

/**
 * One row per rule, one column per transport × driver × backend. A rule no case names is UNCOVERED;
 * a cell is FAIL when any case of the rule failed there (or a known-failing case passed).
 */
export function buildReport(rules: readonly Rule[], coveredRuleIds: ReadonlySet<string>, file: ResultsFile): Report {
  const byColumn = new Map<string, CaseResult[]>();
  for (const result of file.results) {
    const key = columnId(result);
    byColumn.set(key, [...(byColumn.get(key) ?? []), result]);
  }
  const rows = rules.map((rule): RuleRow => {
    if (!coveredRuleIds.has(rule.id)) return { rule, cells: file.columns.map((): Cell => 'UNCOVERED') };
    return {
      rule,
      cells: file.columns.map((column) => cellFor((byColumn.get(columnId(column)) ?? []).filter((r) => r.rules.includes(rule.id)))),
    };
  });
  const failing = file.results.filter((r) => r.outcome === 'fail' || r.outcome === 'xpass');
  const uncovered = rules.filter((r) => !coveredRuleIds.has(r.id)).map((r) => r.id);
  const notRun = rows
    .filter((r) => coveredRuleIds.has(r.rule.id) && !r.cells.some((c) => c === 'pass' || c === 'FAIL' || c === 'xfail'))
    .map((r) => r.rule.id);
  const failedRules = rows.filter((r) => r.cells.includes('FAIL')).length;
  const knownFailing = file.results.filter((r) => r.outcome === 'xfail');
  const parts = [`conformance: ${rules.length} rules`, `${failedRules} FAIL`, `${uncovered.length} UNCOVERED`];
  if (knownFailing.length > 0) parts.push(`${new Set(knownFailing.flatMap((r) => r.rules)).size} known-failing`);
  if (notRun.length > 0) parts.push(`${notRun.length} not run`);
  parts.push(`${file.results.length} results in ${file.columns.length} columns`);
  return {
    columns: file.columns,
    rows,
    failing,
    knownFailing,
    skipped: file.results.filter((r) => r.outcome === 'skip'),
    uncovered,
    notRun,
    summary: parts.join(', '),
    failed: failedRules > 0 || uncovered.length > 0,
  };
}

const mdEscape = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderMarkdown(report: Report, file: ResultsFile): string {
  const header = ['Rule', 'Section', ...report.columns.map(columnId)];
  const lines = [
    '# Conformance report',
    '',
    `Run ${file.startedAt} – ${file.finishedAt}.`,
    '',
    `**${report.summary}**`,
    '',
    ...file.notes.map((n) => `- ${n}`),
    ...(file.notes.length > 0 ? [''] : []),
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...report.rows.map((row) => `| ${mdEscape(row.rule.id)} | ${mdEscape(row.rule.section)} | ${row.cells.join(' | ')} |`),
    '',
    'Cells: `pass`, `FAIL`, `xfail` (listed in conformance/known-failing.yaml and failing as expected), `skip` (the target lacks a capability the case needs), `n/a` (no case of the rule runs there), `UNCOVERED` (no case names the rule).',
    '',
  ];
  const result = (r: CaseResult): string =>
    `\`${r.id}\`${r.outcome === 'xpass' ? ' (known-failing entry passes)' : ''}: ${mdEscape(r.detail ?? '')}`;
  const section = (title: string, items: readonly string[], intro: readonly string[] = []): string[] =>
    items.length === 0 ? [] : [`## ${title}`, '', ...intro, ...items.map((item) => `- ${item}`), ''];
  const blackBox = blackBoxSkips(report.skipped);
  lines.push(
    ...section('Failing', report.failing.map(result)),
    ...section('Uncovered rules', report.uncovered),
    ...section('Known failing', report.knownFailing.map(result)),
    ...section('Not run black-box', blackBox.map(mdEscape), [
      `Cases skipped on the spawned \`--embedded\` executables (and external instances), ${blackBox.length} in all, and why:`,
      '',
    ]),
    ...section('Skipped', report.skipped.map(result)),
    ...section(
      'Rules',
      report.rows.map(
        (row) =>
          `**${row.rule.id}** (${row.rule.section}, ${row.rule.applies}): ${mdEscape(row.rule.statement)}${row.rule.chosen ? ` _Chosen:_ ${mdEscape(row.rule.chosen)}` : ''}`,
      ),
    ),
  );
  return `${lines.join('\n').trimEnd()}\n`;
}

const html = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function renderHtml(report: Report, file: ResultsFile): string {
  const head = ['Rule', 'Section', 'Statement', ...report.columns.map(columnId)].map((h) => `<th>${html(h)}</th>`).join('');
  const body = report.rows
    .map((row) => {
      const cells = row.cells.map((cell) => `<td class="c-${cell === 'n/a' ? 'na' : cell.toLowerCase()}">${cell}</td>`).join('');
      const chosen = row.rule.chosen ? `<br><em>Chosen: ${html(row.rule.chosen)}</em>` : '';
      return `<tr><th id="${html(row.rule.id)}">${html(row.rule.id)}</th><td>${html(row.rule.section)}</td><td>${html(row.rule.statement)}${chosen}</td>${cells}</tr>`;
    })
    .join('\n');
  const list = (title: string, items: readonly CaseResult[]): string =>
    items.length === 0
      ? ''
      : `<h2>${title}</h2><ul>${items.map((r) => `<li><code>${html(r.id)}</code>: ${html(r.detail ?? '')}</li>`).join('')}</ul>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Conformance report</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5rem; }
table { border-collapse: collapse; font-size: 0.85rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.4rem; vertical-align: top; }
thead th { position: sticky; top: 0; background: #f4f4f4; }
.c-pass { background: #dff5df; } .c-fail { background: #f8c9c9; font-weight: bold; } .c-xfail { background: #fbe7c0; }
.c-skip { background: #eee; } .c-na { color: #999; } .c-uncovered { background: #f8c9c9; font-weight: bold; }
</style>
</head>
<body>
<h1>Conformance report</h1>
<p>Run ${html(file.startedAt)} – ${html(file.finishedAt)}.</p>
<p><strong>${html(report.summary)}</strong></p>
${file.notes.length > 0 ? `<ul>${file.notes.map((n) => `<li>${html(n)}</li>`).join('')}</ul>` : ''}
<table>
<thead><tr>${head}</tr></thead>
<tbody>
${body}
</tbody>
</table>
${list('Failing', report.failing)}
${report.uncovered.length > 0 ? `<h2>Uncovered rules</h2><ul>${report.uncovered.map((id) => `<li>${html(id)}</li>`).join('')}</ul>` : ''}
${list('Known failing', report.knownFailing)}
${list('Skipped', report.skipped)}
</body>
</html>
`;
}
