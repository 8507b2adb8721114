#!/usr/bin/env node
// Runs the conformance matrix (same flags as `npm run conformance`, plus --no-run to reuse the last
// results) and writes reports/conformance.md and reports/conformance.html: one row per rule, one column
// per transport × driver × backend.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ALL_CASES } from '../conformance/cases/index.ts';
import { buildReport, renderHtml, renderMarkdown } from '../conformance/report/render-report.ts';
import { readResults, RESULTS_DIR, UNIT_RESULTS_PATH, withUnitResults } from '../conformance/runner/results.ts';
import { findUnitCases, rulesOfTitle } from '../conformance/unit-rules.ts';
import { loadRules } from '../spec/catalogue.ts';
import { conformanceEnvOrExit, runConformance, USAGE } from './conformance.ts';

const argv = process.argv.slice(2);
const env = conformanceEnvOrExit(argv, `${USAGE} [--no-run]`);
// With the speed ring on, its own report beside the plain core's: the two must show the same rule rows.
const name = env['CONFORMANCE_SPEED'] === 'on' ? 'conformance-speed' : 'conformance';
const MARKDOWN_PATH = fileURLToPath(new URL(`../reports/${name}.md`, import.meta.url));
const HTML_PATH = fileURLToPath(new URL(`../reports/${name}.html`, import.meta.url));
// The report shows every column by default, the spawned --embedded executables too.
if (env['CONFORMANCE_BACKEND'] === undefined && env['CONFORMANCE_URL'] === undefined) env['CONFORMANCE_BACKEND'] = 'fake,real,spawned';
const suiteExit = argv.includes('--no-run') ? 0 : await runConformance(env);
const matrixResults = readResults();
if (matrixResults === undefined) {
  process.stderr.write(`conformance: no results in ${RESULTS_DIR}; the suite did not run\n`);
  process.exit(1);
}
const results = existsSync(UNIT_RESULTS_PATH)
  ? withUnitResults(matrixResults, JSON.parse(readFileSync(UNIT_RESULTS_PATH, 'utf8')), rulesOfTitle)
  : matrixResults;
const covered = new Set([...ALL_CASES, ...findUnitCases()].flatMap((c) => c.rules));
const report = buildReport(loadRules(), covered, results);
writeFileSync(MARKDOWN_PATH, renderMarkdown(report, results));
writeFileSync(HTML_PATH, renderHtml(report, results));
process.stdout.write(`${report.summary}\nwritten: reports/${name}.md, reports/${name}.html\n`);
process.exitCode = report.failed || suiteExit !== 0 ? 1 : 0;
