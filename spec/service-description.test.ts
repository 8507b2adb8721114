import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { loadRules } from './catalogue.ts';

/**
 * spec/README.md is the repository's own description of the service (self-contained). Every
 * section a catalogue entry cites ("4.4 rule 3", "7 table", "2.1", "1") must be a heading there, and every
 * entry must be listed under it, so a reference in code or tests can be followed inside the repository.
 */
const description = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
const lines = description.split('\n');
const rules = loadRules();

/** The heading a section reference names: `## 1.`, `### 2.1 `, `#### 4.4 rule 3`. */
function headingOf(section: string): RegExp {
  const [number = '', ...label] = section.split(' ');
  const escaped = number.replace(/\./g, '\\.');
  if (label.length > 0) return new RegExp(`^#### ${escaped} ${label.join(' ')}$`);
  return number.includes('.') ? new RegExp(`^### ${escaped} `) : new RegExp(`^## ${escaped}\\. `);
}

describe('spec/README.md (the service description)', () => {
  test.each([...new Set(rules.map((r) => r.section))])('has a heading for section %s', (section) => {
    expect(lines.some((line) => headingOf(section).test(line))).toBe(true);
  });

  test.each(rules.map((r) => [r.id, r.section] as const))('lists %s under section %s', (id, section) => {
    const at = lines.findIndex((line) => line.includes(`\`${id}\``));
    expect(at).toBeGreaterThan(-1);
    // The nearest heading above the entry is its section's (or, for a section with sub-items, inside it).
    const heading = lines
      .slice(0, at)
      .reverse()
      .find((line) => line.startsWith('#'));
    const [number = ''] = section.split(' ');
    expect(heading).toMatch(new RegExp(`^#+ ${number.replace(/\./g, '\\.')}[. ]`));
    if (section.includes(' ')) expect(heading).toMatch(headingOf(section));
  });

  test('links only inside the repository', () => {
    expect(description).not.toMatch(/\.\.\/\.\.\/|shared\//);
  });
});
