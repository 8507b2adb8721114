/**
 * spec/README.md's rule items, rendered from spec/rules.yaml so that the two cannot drift apart: each
 * item is `- <statement> — \`<id>\` (<applies>)`, followed by `  - Our choice: <chosen>` when the entry
 * has a chosen text. A rule the README does not list yet is placed under its section's heading, after the
 * item of the rule before it in the catalogue (same section), else before the section's first item.
 * Everything else in the README (headings, section prose, where an item was moved to) is written by hand
 * and kept as it is. `npm run generate` rewrites and places the items; `npm run check:generated` fails,
 * naming the entries, when the README's items differ from the catalogue.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadRules, sectionHeading, type Rule } from '../spec/catalogue.ts';

export const SPEC_README_PATH = new URL('../spec/README.md', import.meta.url);

/** An item's first line: the statement, then the catalogue id and where it applies. */
const ITEM = /^- .* — `([A-Za-z0-9-]+)` \((?:http|grpc|all|process)\)$/;
/** The lines an item owns below it (its chosen text). */
const ITEM_DETAIL = /^ {2}- /;

const oneLine = (text: string): string => text.trim().replace(/\s+/g, ' ');

function renderItem(rule: Rule): string[] {
  const item = [`- ${oneLine(rule.statement)} — \`${rule.id}\` (${rule.applies})`];
  if (rule.chosen !== undefined) item.push(`  - Our choice: ${oneLine(rule.chosen)}`);
  return item;
}

export interface RenderedReadme {
  readonly text: string;
  /** The ids whose item the rendering changed (the drift a check reports). */
  readonly changed: readonly string[];
}

/**
 * Where a rule's missing item goes in `lines`: after the item (and its detail lines) of the last rule of
 * `earlier` listed under the section's heading, else before the section's first item, else below the heading.
 */
function placeItem(lines: string[], rule: Rule, earlier: ReadonlySet<string>): void {
  const heading = sectionHeading(rule.section);
  const start = lines.findIndex((line) => heading.test(line));
  if (start < 0) throw new Error(`spec/README.md has no heading for section ${rule.section}, where \`${rule.id}\` belongs`);
  const next = lines.findIndex((line, at) => at > start && line.startsWith('#'));
  const end = next < 0 ? lines.length : next;
  let first: number | undefined;
  let after: number | undefined;
  for (let at = start + 1; at < end; at++) {
    const id = ITEM.exec(lines[at]!)?.[1];
    if (id === undefined) continue;
    first ??= at;
    if (!earlier.has(id)) continue;
    after = at + 1;
    while (after < end && ITEM_DETAIL.test(lines[after]!)) after++;
  }
  const at = after ?? first;
  if (at !== undefined) lines.splice(at, 0, ...renderItem(rule));
  else lines.splice(start + 1, 0, '', ...renderItem(rule));
}

/** `readme` with every rule item rewritten from `rules` and the missing ones placed; an item naming an unknown id throws. */
export function renderSpecReadme(readme: string, rules: readonly Rule[]): RenderedReadme {
  const byId = new Map(rules.map((rule) => [rule.id, rule]));
  const input = readme.split('\n');
  const output: string[] = [];
  const changed: string[] = [];
  const listed = new Set<string>();
  for (let at = 0; at < input.length; at++) {
    const line = input[at]!;
    const id = ITEM.exec(line)?.[1];
    if (id === undefined) {
      output.push(line);
      continue;
    }
    const rule = byId.get(id);
    if (rule === undefined) throw new Error(`spec/README.md lists \`${id}\`, which spec/rules.yaml does not have`);
    listed.add(id);
    const before = [line];
    while (at + 1 < input.length && ITEM_DETAIL.test(input[at + 1]!)) before.push(input[++at]!);
    const after = renderItem(rule);
    if (before.join('\n') !== after.join('\n')) changed.push(id);
    output.push(...after);
  }
  // The rules not listed yet, in catalogue order, so each finds the ones before it already placed.
  for (const [index, rule] of rules.entries()) {
    if (listed.has(rule.id)) continue;
    const earlier = rules.slice(0, index).filter((other) => other.section === rule.section);
    placeItem(output, rule, new Set(earlier.map((other) => other.id)));
    changed.push(rule.id);
  }
  return { text: output.join('\n'), changed };
}

/** Rewrites spec/README.md's items and places the missing ones; returns the ids it changed or added. */
export function writeSpecReadme(): readonly string[] {
  const rendered = renderSpecReadme(readFileSync(SPEC_README_PATH, 'utf8'), loadRules());
  if (rendered.changed.length > 0) writeFileSync(SPEC_README_PATH, rendered.text);
  return rendered.changed;
}

/** The ids whose README item differs from the catalogue (empty: in step). */
export function specReadmeDrift(): readonly string[] {
  return renderSpecReadme(readFileSync(SPEC_README_PATH, 'utf8'), loadRules()).changed;
}
