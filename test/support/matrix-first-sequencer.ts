import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * vitest's own order (vitest.config.ts `sequence.sequencer`), with one change for a cold start. vitest runs
 * the files that took longest last time first, from its duration cache in node_modules/.vite; a fresh clone
 * or `npm ci` (CI) has no such cache, and vitest then sorts by file size. The conformance columns are
 * three-line files (conformance/columns/) that run a transport's whole matrix, the longest files of the
 * suite: sorted by size they would start last and leave one worker finishing them while the other idles.
 * So a column without a cached duration goes first within its project; with a cache, vitest's order holds.
 */
export class MatrixFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const cold = (spec: TestSpecification): boolean =>
      spec.moduleId.includes('/conformance/columns/') && this.ctx.cache.getTestSpecificationResult(spec) === undefined;
    // BaseSequencer keeps each project (and group) contiguous: reorder inside each, stably.
    const blockOf = (spec: TestSpecification): string => `${spec.project.config.sequence.groupOrder}|${spec.project.name}`;
    const position = new Map(sorted.map((spec, index) => [spec, index]));
    const firstOfBlock = new Map<string, number>();
    for (const [index, spec] of sorted.entries()) if (!firstOfBlock.has(blockOf(spec))) firstOfBlock.set(blockOf(spec), index);
    return [...sorted].sort(
      (a, b) =>
        firstOfBlock.get(blockOf(a))! - firstOfBlock.get(blockOf(b))! ||
        Number(cold(b)) - Number(cold(a)) ||
        position.get(a)! - position.get(b)!,
    );
  }
}
