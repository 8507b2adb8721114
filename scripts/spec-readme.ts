/**
 * spec/README.md's rule items, rendered from spec/rules.yaml so that the two cannot drift apart: each
 * item is `- <statement> — \`<id>\` (<applies>)`, followed by `  - Our choice: <chosen>` when the entry
 * has a chosen text. Everything else in the README (headings, section prose, where each item sits) is
 * written by hand and kept as it is. `npm run generate` rewrites the items in place;
 * `npm run check:generated` fails, naming the entries, when the README's items differ from the catalogue.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadRules, type Rule } from '../spec/catalogue.ts';

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

/** `readme` with every rule item rewritten from `rules`; an item naming an unknown id throws. */
export function renderSpecReadme(readme: string, rules: readonly Rule[]): RenderedReadme {
  const byId = new Map(rules.map((rule) => [rule.id, rule]));
  const input = readme.split('\n');
  const output: string[] = [];
  const changed: string[] = [];
  for (let at = 0; at < input.length; at++) {
    const line = input[at]!;
    const id = ITEM.exec(line)?.[1];
    if (id === undefined) {
      output.push(line);
      continue;
    }
    const rule = byId.get(id);
    if (rule === undefined) throw new Error(`spec/README.md lists \`${id}\`, which spec/rules.yaml does not have`);
    const before = [line];
    while (at + 1 < input.length && ITEM_DETAIL.test(input[at + 1]!)) before.push(input[++at]!);
    const after = renderItem(rule);
    if (before.join('\n') !== after.join('\n')) changed.push(id);
    output.push(...after);
  }
  return { text: output.join('\n'), changed };
}

/** Rewrites spec/README.md's items; returns the ids it changed. */
export function writeSpecReadme(): readonly string[] {
  const rendered = renderSpecReadme(readFileSync(SPEC_README_PATH, 'utf8'), loadRules());
  if (rendered.changed.length > 0) writeFileSync(SPEC_README_PATH, rendered.text);
  return rendered.changed;
}

/** The ids whose README item differs from the catalogue (empty: in step). */
export function specReadmeDrift(): readonly string[] {
  return renderSpecReadme(readFileSync(SPEC_README_PATH, 'utf8'), loadRules()).changed;
}
