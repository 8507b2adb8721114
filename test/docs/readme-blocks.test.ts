import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildScript, documents, errorBodies, parseReadme, staticProblems } from '../../scripts/readme-runner.ts';

// What can be checked of README.md and docs/*.md without running them (`npm run readme` runs them, in CI):
// their markers parse, each server is stopped in the file that starts it, every `npm run` names a script,
// every ci-step is a step of .ci/run, and every command a reader types goes through the pinned Node (an npm
// script), never the system one.
const root = new URL('../../', import.meta.url);
const scripts = new Set(Object.keys((JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: object }).scripts));
const ciRun = readFileSync(new URL('.ci/run', root), 'utf8');
const parsed = documents(root.pathname).map((file) => ({ file, blocks: parseReadme(readFileSync(new URL(file, root), 'utf8'), file) }));

describe('README.md and docs/*.md shell blocks (scripts/readme-runner.ts)', () => {
  it('covers the README and the docs pages, with runnable blocks in the README', () => {
    expect(parsed.map((p) => p.file)).toContain('docs/real-backends.md');
    expect(parsed[0]?.file).toBe('README.md');
    expect(parsed[0]?.blocks.filter((b) => b.kind === 'run').length).toBeGreaterThan(3);
  });

  it('has no static problem: scripts exist, ci-steps are CI steps, servers paired, no system-Node TypeScript or npx', () => {
    expect(parsed.flatMap(({ file, blocks }) => staticProblems(file, blocks, scripts, ciRun))).toEqual([]);
  });

  it('finds each kind of static problem', () => {
    const blocks = parseReadme(
      [
        '<!-- readme-runner: serve http://x -->',
        '```sh',
        'npm run nope   # a script that is not there',
        '```',
        '<!-- readme-runner: ci-step npm run absent -->',
        '```sh',
        'npx stryker run',
        'node bench/run.ts',
        '```',
      ].join('\n'),
      'x.md',
    );
    expect(staticProblems('x.md', blocks, new Set(['start']), 'step npm test\n')).toEqual([
      'x.md:2: package.json has no script `nope`',
      'x.md:6: .ci/run has no step `npm run absent`',
      'x.md:6: runs TypeScript or npx with the system Node: npx stryker run',
      'x.md:6: runs TypeScript or npx with the system Node: node bench/run.ts',
      'x.md: a server is still running at the end of the file',
    ]);
  });

  it('turns a serve block into the commands before the server, then the server as a job', () => {
    const script = buildScript(
      [{ kind: 'serve', line: 1, text: 'export A=1\nnpm start   # Ctrl-C stops it', url: 'http://127.0.0.1:8081/readyz' }],
      '/tmp/x',
    );
    expect(script).toContain(
      "export A=1\n__rr_serve 'http://127.0.0.1:8081/readyz' '/tmp/x/server-README.md-1.log' 'npm start   # Ctrl-C stops it'",
    );
    expect(buildScript([{ kind: 'ci-step', line: 3, text: 'npm test', step: 'npm test' }], '/tmp/x', 'docs/t.md')).toContain(
      'docs/t.md:3 not run: .ci/run runs `npm test` as a step of its own',
    );
    expect(() => parseReadme('<!-- readme-runner: sometimes -->\n```sh\nls\n```\n')).toThrow(/unknown readme-runner marker/);
    expect(() => parseReadme('<!-- readme-runner: skip why -->\ntext\n')).toThrow(/marker without a block/);
    expect(errorBodies('ok\n{"error":"not found"}\n{"clean":true}')).toEqual(['{"error":"not found"}']);
  });
});
