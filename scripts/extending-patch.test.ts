// docs/extending.md's worked operation ships as a patch (docs/extending/count-orders.patch): it must still
// apply to the tree it documents, or the page's steps have drifted from the code.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('docs/extending.md', () => {
  it('its example patch applies to this tree (git apply --check)', () => {
    expect(() =>
      execFileSync('git', ['apply', '--check', 'docs/extending/count-orders.patch'], { cwd: root, stdio: 'pipe' }),
    ).not.toThrow();
  });
});
