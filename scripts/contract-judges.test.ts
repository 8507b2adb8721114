import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOutOfContract, NOT_A_URI, templateOf, unexplained, type Violation } from './contract-judges.ts';

const TEMPLATES = ['/auth/login', '/orders', '/orders/{id}', '/me/recent'];
const listed = loadOutOfContract(readFileSync(join(import.meta.dirname, '..', 'conformance', 'out-of-contract.yaml'), 'utf8'));
const violation = (method: string, url: string, location: string, message: string): Violation => ({
  method,
  url,
  status: 400,
  location,
  message,
});

describe('the Prism judge (rule OPENAPI-exact)', () => {
  it('[OPENAPI-exact] a response violation is never explained, whatever the list says', () => {
    const response = violation('GET', '/orders', 'response', 'Request header parameter idempotency-key must match pattern x');
    expect(unexplained([response], listed, TEMPLATES)).toEqual([response]);
  });

  it('[OPENAPI-exact] a request violation counts only when an entry names its method, template and message', () => {
    const badId = violation('GET', '/orders/12345', 'request', 'Request path parameter id must match format "uuid"');
    const wrongMethod = violation('POST', '/orders/12345', 'request', 'Request path parameter id must match format "uuid"');
    const unlisted = violation('GET', '/orders?limit=abc', 'request', 'Request query parameter limit must be integer');
    const direct = violation('GET', '/orders/%E0%A4%A-1', 'request', NOT_A_URI);
    expect(unexplained([badId, wrongMethod, unlisted, direct], listed, TEMPLATES)).toEqual([wrongMethod, unlisted]);
  });

  it('matches a URL to its operation template, query dropped; a path outside the document has none', () => {
    expect(templateOf('/orders/0f8fad5b-d9cb-469f-a165-70867728950e?x=1', TEMPLATES)).toBe('/orders/{id}');
    expect(templateOf('/orders', TEMPLATES)).toBe('/orders');
    expect(templateOf('/orders/1/items', TEMPLATES)).toBeUndefined();
  });

  it('refuses an entry without its reason', () => {
    expect(() => loadOutOfContract('requests:\n  - { method: GET, path: /orders, violation: x }\n')).toThrow(/why/);
  });
});
