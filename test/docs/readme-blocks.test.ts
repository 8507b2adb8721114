import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildScript, errorBodies, parseReadme } from '../../scripts/readme-runner.ts';

// What can be checked of README.md without running it (`npm run readme` runs it, in CI): its markers parse,
// and every command a reader types goes through the pinned Node (an npm script), never the system one.
const blocks = parseReadme(readFileSync(new URL('../../README.md', import.meta.url), 'utf8'));

describe('README.md shell blocks (scripts/readme-runner.ts)', () => {
  it('has runnable blocks, one server per serve marker, each stopped by a later ctrl-c', () => {
    expect(blocks.filter((b) => b.kind === 'run').length).toBeGreaterThan(3);
    let running = 0;
    for (const block of blocks) {
      if (block.kind === 'serve') expect(++running, `README.md:${block.line}: a server is already running`).toBe(1);
      if (block.kind === 'ctrl-c') expect(running--, `README.md:${block.line}: ctrl-c with no server`).toBe(1);
    }
    expect(running).toBe(0);
  });

  it('runs no TypeScript with the system node, and no bare npx (both fail on Node 20)', () => {
    const typed = blocks.flatMap((b) => (b.kind === 'ctrl-c' ? [] : b.text.split('\n').map((line) => ({ line, at: b.line }))));
    const offenders = typed.filter(({ line }) => /(^|[|;&(]\s*)(node\s+\S+\.ts|npx\s)/.test(line.replace(/#.*$/, '')));
    expect(offenders).toEqual([]);
  });

  it('turns a serve block into the commands before the server, then the server as a job', () => {
    const script = buildScript(
      [{ kind: 'serve', line: 1, text: 'export A=1\nnpm start   # Ctrl-C stops it', url: 'http://127.0.0.1:8081/readyz' }],
      '/tmp/x',
    );
    expect(script).toContain("export A=1\n__rr_serve 'http://127.0.0.1:8081/readyz' '/tmp/x/server-1.log' 'npm start   # Ctrl-C stops it'");
    expect(() => parseReadme('<!-- readme-runner: sometimes -->\n```sh\nls\n```\n')).toThrow(/unknown readme-runner marker/);
    expect(() => parseReadme('<!-- readme-runner: skip why -->\ntext\n')).toThrow(/marker without a block/);
    expect(errorBodies('ok\n{"error":"not found"}\n{"clean":true}')).toEqual(['{"error":"not found"}']);
  });
});
