import { describe, expect, it } from 'vitest';
import { floorOf, folderOf, merged, notYetScored, renderTable, scoresOf, survivorsOf, thresholdOf, withTable } from './mutation-scores.ts';

const mutants = (...statuses: string[]) => ({ mutants: statuses.map((status) => ({ status })) });

describe('mutation scores per folder', () => {
  it('groups files by their folder under src/', () => {
    expect(folderOf('src/domain/order.ts')).toBe('src/domain');
    expect(folderOf('src/transports/http/routes.ts')).toBe('src/transports');
    expect(folderOf('packages/one-port-grpc/private/wire.ts')).toBe('packages/one-port-grpc');
    expect(folderOf('/work/x/src/session/session.ts')).toBe('src/session');
  });

  it('scores killed and timed-out mutants over all but ignored and invalid ones', () => {
    const rows = scoresOf({
      files: {
        'src/domain/a.ts': mutants('Killed', 'Killed', 'Timeout', 'Survived', 'Ignored') as never,
        'src/domain/b.ts': mutants('NoCoverage', 'CompileError') as never,
        'src/session/s.ts': mutants('Killed') as never,
      },
    });
    expect(rows.map((r) => [r.folder, r.valid, r.score])).toEqual([
      ['src/domain', 5, 60],
      ['src/session', 1, 100],
      ['all', 6, (100 * 4) / 6],
    ]);
    expect(renderTable(rows)).toContain(`| \`src/domain\` | 7 | 2 | 1 | 1 | 1 | 1 | 1 | 60.0% | 90% | ${floorOf('src/domain')}% |`);
  });

  it("merges the sets' reports into one, and refuses a file two sets mutated", () => {
    const core = { files: { 'src/domain/a.ts': mutants('Killed') as never } };
    const grpc = { files: { 'src/transports/grpc/b.ts': mutants('Survived', 'Killed') as never } };
    expect(scoresOf(merged([core, grpc])).map((r) => [r.folder, r.valid])).toEqual([
      ['src/domain', 1],
      ['src/transports', 2],
      ['all', 3],
    ]);
    expect(() => merged([core, core])).toThrow(/src\/domain\/a.ts is in two mutation reports/);
  });

  it('lists the survivors file by file, in source order, and no file without one', () => {
    const at = (line: number, status: string, replacement: string) => ({
      status,
      mutatorName: 'StringLiteral',
      replacement,
      location: { start: { line, column: 3 } },
    });
    const text = survivorsOf({
      files: {
        'src/b.ts': { mutants: [at(9, 'NoCoverage', '""'), at(2, 'Survived', '"x"')] } as never,
        'src/a.ts': { mutants: [at(1, 'Killed', '""')] } as never,
      },
    });
    expect(text).toContain('## src/b.ts (2)\n\n- 2:3 StringLiteral: `"x"`\n- 9:3 StringLiteral (no coverage): `""`\n');
    expect(text).not.toContain('src/a.ts');
  });

  it('holds CI to a floor no higher than the threshold, the threshold where no floor is set', () => {
    for (const folder of ['src/domain', 'src/session', 'src/service', 'src/transports', 'src/adapters', 'src/other'])
      expect(floorOf(folder)).toBeLessThanOrEqual(thresholdOf(folder));
    expect(floorOf('src/not-a-folder')).toBe(thresholdOf('src/not-a-folder'));
  });

  it('replaces only what lies between the README markers', () => {
    const readme = 'before\n<!-- mutation-scores:start -->\nold\n<!-- mutation-scores:end -->\nafter';
    expect(withTable(readme, 'new')).toBe('before\n<!-- mutation-scores:start -->\nnew\n<!-- mutation-scores:end -->\nafter');
    expect(() => withTable('no markers', 'new')).toThrow(/no <!-- mutation-scores:start -->/);
  });

  it('names the sets the table leaves out: those stopped part way with their progress, then those never run', () => {
    expect(
      notYetScored([
        { set: 'transports-http', tested: 184 },
        { set: 'adapters', tested: undefined },
        { set: 'rest', tested: undefined },
      ]),
    ).toBe(
      '\n\nStopped part way, resumed by their next run, not in the table yet: `transports-http` (184 mutants tested).' +
        '\n\nNot run yet: `adapters`, `rest` (mutation-sets.ts).',
    );
    expect(notYetScored([])).toBe('');
  });
});
