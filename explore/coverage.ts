/**
 * The explorer's own measure of reach: line and branch coverage of the code it is meant to drive
 * (src/service, src/session, src/rate-limit), read from the V8 coverage files Node writes under
 * NODE_V8_COVERAGE. Hand-written because no coverage library is installed (no c8, v8-to-istanbul or
 * @vitest/coverage-v8 in node_modules) and none is needed: Node runs these .ts files by stripping
 * their types into whitespace, so V8's byte offsets are offsets into the source as written, and the
 * TypeScript compiler (a dev dependency) gives the syntax tree that says where lines and branches are.
 *
 * Counts: V8's block coverage gives, per function, nested ranges with execution counts (a nested range
 * with its parent's count is merged away), so the count at a position is that of the innermost range
 * holding it. A line is code when a token of the type-stripped source is on it (comments, blank lines,
 * imports of types and interfaces are not); it is covered when the count at its first token is > 0.
 * Branches are counted as istanbul counts them, each arm its own: if (then, else, the missing else
 * too), ?: (both), && || ?? (each operand), switch (each case), try (catch), and loops (body entered).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** The code the explorer is measured on: every non-test file of these folders, loaded or not. */
export const COVERED_DIRS = ['src/service', 'src/session', 'src/rate-limit'] as const;

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface V8Range {
  readonly startOffset: number;
  readonly endOffset: number;
  readonly count: number;
}
interface V8Function {
  readonly functionName: string;
  readonly ranges: readonly V8Range[];
  readonly isBlockCoverage: boolean;
}
interface V8Script {
  readonly url: string;
  readonly functions: readonly V8Function[];
}

export interface Branch {
  readonly line: number;
  readonly kind: string;
  readonly count: number;
  /** The arm's source text, shortened, for the unreached list. */
  readonly text: string;
}

export interface FileCoverage {
  readonly file: string;
  readonly loaded: boolean;
  readonly lines: number;
  readonly linesCovered: number;
  readonly uncoveredLines: readonly number[];
  readonly branches: readonly Branch[];
}

export interface CoverageSummary {
  readonly files: readonly FileCoverage[];
  readonly lines: number;
  readonly linesCovered: number;
  readonly branches: number;
  readonly branchesCovered: number;
}

/** The files measured: every .ts of COVERED_DIRS but tests. */
export function coveredFiles(): string[] {
  return COVERED_DIRS.flatMap((dir) =>
    readdirSync(join(ROOT, dir))
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
      .sort()
      .map((name) => `${dir}/${name}`),
  );
}

/** Reads every coverage file in `dir` (one per process) and measures the covered files. */
export function summarise(dir: string): CoverageSummary {
  const scripts = new Map<string, V8Function[]>();
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    const { result } = JSON.parse(readFileSync(join(dir, name), 'utf8')) as { result: V8Script[] };
    for (const script of result) {
      const functions = scripts.get(script.url) ?? [];
      functions.push(...script.functions);
      scripts.set(script.url, functions);
    }
  }
  const files = coveredFiles().map((file) => measure(file, scripts.get(pathToFileURL(join(ROOT, file)).href)));
  return {
    files,
    lines: sum(files, (f) => f.lines),
    linesCovered: sum(files, (f) => f.linesCovered),
    branches: sum(files, (f) => f.branches.length),
    branchesCovered: sum(files, (f) => f.branches.filter((b) => b.count > 0).length),
  };
}

function sum<T>(items: readonly T[], of: (item: T) => number): number {
  return items.reduce((total, item) => total + of(item), 0);
}

function measure(file: string, functions: readonly V8Function[] | undefined): FileCoverage {
  const source = readFileSync(join(ROOT, file), 'utf8');
  const stripped = strip(source);
  if (stripped.length !== source.length) throw new Error(`coverage: stripping ${file} moved its offsets`);
  const tree = ts.createSourceFile(file, stripped, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const ranges = (functions ?? []).flatMap((f) => f.ranges);
  /** Executions at `offset`: the innermost range's count; a file never loaded ran nothing. */
  const countAt = (offset: number): number => {
    let best: V8Range | undefined;
    for (const range of ranges) {
      if (range.startOffset <= offset && offset < range.endOffset) {
        if (best === undefined || range.endOffset - range.startOffset <= best.endOffset - best.startOffset) best = range;
      }
    }
    return best?.count ?? 0;
  };
  const lineOf = (offset: number): number => tree.getLineAndCharacterOfPosition(offset).line + 1;

  // Lines: where each token of the stripped source starts (a statement's first token decides its line).
  const firstToken = new Map<number, number>();
  const visitTokens = (node: ts.Node): void => {
    const children = node.getChildren(tree);
    if (children.length === 0 && node.kind !== ts.SyntaxKind.EndOfFileToken) {
      const start = node.getStart(tree);
      const line = lineOf(start);
      if (!firstToken.has(line)) firstToken.set(line, start);
      return;
    }
    for (const child of children) visitTokens(child);
  };
  visitTokens(tree);
  const uncoveredLines = [...firstToken].filter(([, offset]) => countAt(offset) === 0).map(([line]) => line);

  const branches: Branch[] = [];
  const arm = (kind: string, node: ts.Node, count: number = countAt(node.getStart(tree))): void => {
    const text = node.getText(tree).replace(/\s+/g, ' ');
    branches.push({ line: lineOf(node.getStart(tree)), kind, count, text: text.length > 60 ? `${text.slice(0, 57)}...` : text });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isIfStatement(node)) {
      arm('if then', node.thenStatement);
      if (node.elseStatement !== undefined) arm('if else', node.elseStatement);
      else arm('if (no else)', node.expression, countAt(node.getStart(tree)) - countAt(node.thenStatement.getStart(tree)));
    } else if (ts.isConditionalExpression(node)) {
      arm('?: true', node.whenTrue);
      arm('?: false', node.whenFalse);
    } else if (
      ts.isBinaryExpression(node) &&
      [
        ts.SyntaxKind.AmpersandAmpersandToken,
        ts.SyntaxKind.BarBarToken,
        ts.SyntaxKind.QuestionQuestionToken,
        ts.SyntaxKind.QuestionQuestionEqualsToken,
        ts.SyntaxKind.BarBarEqualsToken,
        ts.SyntaxKind.AmpersandAmpersandEqualsToken,
      ].includes(node.operatorToken.kind)
    ) {
      const op = node.operatorToken.getText(tree);
      arm(`${op} left`, node.left);
      arm(`${op} right`, node.right);
    } else if (ts.isCaseClause(node) || ts.isDefaultClause(node)) {
      arm(ts.isCaseClause(node) ? 'case' : 'default', node);
    } else if (ts.isCatchClause(node)) {
      arm('catch', node.block);
    } else if (ts.isForStatement(node) || ts.isForOfStatement(node) || ts.isForInStatement(node) || ts.isWhileStatement(node)) {
      arm('loop body', node.statement);
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return {
    file,
    loaded: functions !== undefined,
    lines: firstToken.size,
    linesCovered: firstToken.size - uncoveredLines.length,
    uncoveredLines,
    branches,
  };
}

/** Node's type stripper, without the one-time warning that it is experimental (it would land in the report's output). */
function strip(source: string): string {
  const emit = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    return stripTypeScriptTypes(source, { mode: 'strip' });
  } finally {
    process.emitWarning = emit;
  }
}

const percent = (part: number, whole: number): string => (whole === 0 ? '100.0' : ((100 * part) / whole).toFixed(1));

/** The report (reports/explore-coverage.md): totals, per file, and every line and branch not reached. */
export function renderReport(summary: CoverageSummary, how: string): string {
  const out: string[] = [
    '# Explorer coverage',
    '',
    `What \`${how}\` reaches of ${COVERED_DIRS.map((d) => `${d}/`).join(', ')} (every non-test file, loaded or not),`,
    'measured by explore/coverage.ts from V8 block coverage (NODE_V8_COVERAGE). Regenerate with the same command.',
    'Why each unreached line or branch is left: explore/README.md, "Coverage".',
    '',
    `**Lines ${percent(summary.linesCovered, summary.lines)}% (${summary.linesCovered}/${summary.lines}), ` +
      `branches ${percent(summary.branchesCovered, summary.branches)}% (${summary.branchesCovered}/${summary.branches}).**`,
    '',
    ...(() => {
      const loaded = summary.files.filter((f) => f.loaded);
      if (loaded.length === summary.files.length) return [];
      const lines = sum(loaded, (f) => f.lines);
      const linesCovered = sum(loaded, (f) => f.linesCovered);
      const branches = sum(loaded, (f) => f.branches.length);
      const branchesCovered = sum(loaded, (f) => f.branches.filter((b) => b.count > 0).length);
      return [
        `Of the files the explorer loads (all but ${summary.files
          .filter((f) => !f.loaded)
          .map((f) => f.file)
          .join(', ')}): ` +
          `lines ${percent(linesCovered, lines)}% (${linesCovered}/${lines}), branches ${percent(branchesCovered, branches)}% (${branchesCovered}/${branches}).`,
        '',
      ];
    })(),
    '| file | lines | branches |',
    '| --- | ---: | ---: |',
  ];
  for (const f of summary.files) {
    const covered = f.branches.filter((b) => b.count > 0).length;
    out.push(
      `| ${f.file}${f.loaded ? '' : ' (never loaded)'} | ${percent(f.linesCovered, f.lines)}% (${f.linesCovered}/${f.lines}) | ` +
        `${percent(covered, f.branches.length)}% (${covered}/${f.branches.length}) |`,
    );
  }
  out.push('', '## Not reached', '');
  for (const f of summary.files) {
    const missed = f.branches.filter((b) => b.count <= 0);
    if (f.uncoveredLines.length === 0 && missed.length === 0) continue;
    if (!f.loaded) {
      out.push(`- ${f.file}: never loaded (${f.lines} lines, ${f.branches.length} branches)`);
      continue;
    }
    out.push(`- ${f.file}: lines ${compress(f.uncoveredLines) || 'none'}`);
    for (const b of missed) out.push(`  - line ${b.line}, ${b.kind}: \`${b.text.replace(/`/g, "'")}\``);
  }
  return `${out.join('\n')}\n`;
}

/** 3,4,5,9 -> "3-5, 9". */
function compress(lines: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    let j = i;
    while (j + 1 < lines.length && (lines[j + 1] as number) === (lines[j] as number) + 1) j++;
    parts.push(i === j ? String(lines[i]) : `${lines[i]}-${lines[j]}`);
    i = j;
  }
  return parts.join(', ');
}

export function relativeToRoot(path: string): string {
  return relative(ROOT, path);
}
