import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { loadRules, sectionHeading } from './catalogue.ts';

/**
 * spec/README.md is the repository's own description of the service (self-contained). Every
 * section a catalogue entry cites ("4.4 rule 3", "7 table", "2.1", "1") must be a heading there, and every
 * entry must be listed under it, so a reference in code or tests can be followed inside the repository.
 */
const description = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
const lines = description.split('\n');
const rules = loadRules();

describe('spec/README.md (the service description)', () => {
  test.each([...new Set(rules.map((r) => r.section))])('has a heading for section %s', (section) => {
    expect(lines.some((line) => sectionHeading(section).test(line))).toBe(true);
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
    if (section.includes(' ')) expect(heading).toMatch(sectionHeading(section));
  });

  test('links only inside the repository', () => {
    expect(description).not.toMatch(/\.\.\/\.\.\/|shared\//);
  });
});
