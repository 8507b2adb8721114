import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** Where a rule is checked: the REST side, the gRPC side, both, or the process (executable, core). */
export type RuleScope = 'http' | 'grpc' | 'all' | 'process';

export interface Rule {
  readonly id: string;
  readonly section: string;
  readonly statement: string;
  readonly applies: RuleScope;
  /** Set for the spec's "not shown" items: what this implementation chose. */
  readonly chosen?: string;
}

export const RULES_PATH = new URL('./rules.yaml', import.meta.url);

/**
 * The spec/README.md heading a rule's section names: `1` is `## 1. …`, `2.1` is `### 2.1 …`, and a
 * section with a label (`4.4 rule 3`, `7 table`) is exactly `#### 4.4 rule 3`.
 */
export function sectionHeading(section: string): RegExp {
  const [number = '', ...label] = section.split(' ');
  const escaped = number.replace(/\./g, '\\.');
  if (label.length > 0) return new RegExp(`^#### ${escaped} ${label.join(' ')}$`);
  return number.includes('.') ? new RegExp(`^### ${escaped} `) : new RegExp(`^## ${escaped}\\. `);
}

const SCOPES: readonly RuleScope[] = ['http', 'grpc', 'all', 'process'];
const ID = /^[A-Z][A-Z0-9]*(-[A-Za-z0-9]+)+$/;

/** Reads and validates spec/rules.yaml; a malformed entry fails loudly with its position. */
export function loadRules(text: string = readFileSync(RULES_PATH, 'utf8')): Rule[] {
  const doc = parse(text) as { rules?: unknown };
  if (!Array.isArray(doc.rules)) throw new Error('rules.yaml: top-level `rules` list is missing');
  const seen = new Set<string>();
  return doc.rules.map((raw: unknown, index: number) => {
    const entry = raw as Partial<Record<keyof Rule, unknown>>;
    const where = `rules.yaml entry ${index + 1}${typeof entry.id === 'string' ? ` (${entry.id})` : ''}`;
    if (typeof entry.id !== 'string' || !ID.test(entry.id)) throw new Error(`${where}: id must look like AREA-name`);
    if (seen.has(entry.id)) throw new Error(`${where}: duplicate id`);
    seen.add(entry.id);
    if (typeof entry.section !== 'string' || entry.section === '') throw new Error(`${where}: section is required`);
    if (typeof entry.statement !== 'string' || entry.statement === '') throw new Error(`${where}: statement is required`);
    if (!SCOPES.includes(entry.applies as RuleScope)) throw new Error(`${where}: applies must be one of ${SCOPES.join(', ')}`);
    if (entry.chosen !== undefined && typeof entry.chosen !== 'string') throw new Error(`${where}: chosen must be text`);
    return {
      id: entry.id,
      section: entry.section,
      statement: entry.statement,
      applies: entry.applies as RuleScope,
      ...(entry.chosen === undefined ? {} : { chosen: entry.chosen }),
    };
  });
}
