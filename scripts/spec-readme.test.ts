import { describe, expect, test } from 'vitest';
import type { Rule } from '../spec/catalogue.ts';
import { renderSpecReadme, specReadmeDrift } from './spec-readme.ts';

const RULES: Rule[] = [
  { id: 'GET-200', section: '4.1', statement: 'An owner reads an order.', applies: 'all' },
  { id: 'LIMIT-rate', section: '8', statement: 'Requests are rate limited.', applies: 'http', chosen: 'Ten per second,\n  per client.' },
];

describe('spec/README.md rule items (scripts/spec-readme.ts)', () => {
  test('rewrites a drifted statement, adds a missing choice, replaces a stale one and keeps the prose', () => {
    const readme = [
      '## 4.1 Routes',
      'Prose stays.',
      '- An owner reads it. — `GET-200` (all)',
      '  - Our choice: stale',
      '- Requests are rate limited. — `LIMIT-rate` (http)',
      '',
    ].join('\n');
    const rendered = renderSpecReadme(readme, RULES);
    expect(rendered.changed).toEqual(['GET-200', 'LIMIT-rate']);
    expect(rendered.text).toBe(
      [
        '## 4.1 Routes',
        'Prose stays.',
        '- An owner reads an order. — `GET-200` (all)',
        '- Requests are rate limited. — `LIMIT-rate` (http)',
        '  - Our choice: Ten per second, per client.',
        '',
      ].join('\n'),
    );
    expect(renderSpecReadme(rendered.text, RULES).changed).toEqual([]);
  });

  test('an item naming an id the catalogue does not have fails', () => {
    expect(() => renderSpecReadme('- Gone. — `GONE-rule` (all)', RULES)).toThrow(/GONE-rule/);
  });

  test('the committed spec/README.md is in step with spec/rules.yaml', () => {
    expect(specReadmeDrift()).toEqual([]);
  });
});
