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

  test("places a rule the README does not list under its section's heading, in catalogue order", () => {
    const rules: Rule[] = [
      { id: 'LOGIN-200', section: '4.1 table', statement: 'Login answers 200.', applies: 'all' },
      { id: 'COUNT-own', section: '4.1 table', statement: 'A caller counts its orders.', applies: 'all', chosen: 'GET /me/order-count.' },
      { id: 'LIST-200', section: '4.1 table', statement: 'List answers 200.', applies: 'all' },
      { id: 'FIRST-item', section: '4.1 table', statement: 'Placed first.', applies: 'http' },
      { id: 'SVC-one', section: '1', statement: 'The first of its section.', applies: 'process' },
      { id: 'ROUTE-1', section: '4.1 rule 1', statement: 'Under an empty heading.', applies: 'http' },
    ];
    const readme = [
      '## 1. What it does',
      '',
      'Prose.',
      '',
      '#### 4.1 table',
      '',
      '- Login answers 200. — `LOGIN-200` (all)',
      '  - Our choice: stale',
      '- List answers 200. — `LIST-200` (all)',
      '',
      '#### 4.1 rule 1',
      '',
    ].join('\n');
    const rendered = renderSpecReadme(readme, [...rules.slice(0, 3), rules[4]!, rules[5]!]);
    expect(rendered.changed).toEqual(['LOGIN-200', 'COUNT-own', 'SVC-one', 'ROUTE-1']);
    expect(rendered.text).toBe(
      [
        '## 1. What it does',
        '',
        '- The first of its section. — `SVC-one` (process)',
        '',
        'Prose.',
        '',
        '#### 4.1 table',
        '',
        '- Login answers 200. — `LOGIN-200` (all)',
        '- A caller counts its orders. — `COUNT-own` (all)',
        '  - Our choice: GET /me/order-count.',
        '- List answers 200. — `LIST-200` (all)',
        '',
        '#### 4.1 rule 1',
        '',
        '- Under an empty heading. — `ROUTE-1` (http)',
        '',
      ].join('\n'),
    );
    // A rule first in its section's catalogue order goes before the section's first item.
    const first = renderSpecReadme(rendered.text, [rules[3]!, ...rules.slice(0, 3), rules[4]!, rules[5]!]);
    expect(first.changed).toEqual(['FIRST-item']);
    expect(first.text.split('\n').slice(8, 10)).toEqual([
      '- Placed first. — `FIRST-item` (http)',
      '- Login answers 200. — `LOGIN-200` (all)',
    ]);
    expect(() =>
      renderSpecReadme(readme, [...rules, { id: 'NO-heading', section: '9 rule 9', statement: 'Nowhere.', applies: 'all' }]),
    ).toThrow(/no heading for section 9 rule 9/);
  });

  test('an item naming an id the catalogue does not have fails', () => {
    expect(() => renderSpecReadme('- Gone. — `GONE-rule` (all)', RULES)).toThrow(/GONE-rule/);
  });

  test('the committed spec/README.md is in step with spec/rules.yaml', () => {
    expect(specReadmeDrift()).toEqual([]);
  });
});
