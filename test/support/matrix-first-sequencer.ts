import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * vitest's own order (vitest.config.ts `sequence.sequencer`), with the conformance columns always first
 * within their project. The columns are three-line files (conformance/columns/) that run a transport's
 * whole matrix, the longest files of the suite. vitest runs the files that took longest last time first,
 * from its duration cache in node_modules/.vite; without a cache (a fresh clone, `npm ci`) it sorts by file
 * size, and a cache that saw a column only skipped (another command's run) holds a duration of zero: either
 * way they would start last and leave one worker finishing them while the others idle.
 * Correctness does not depend on this order: files of one worker share their modules (`isolate: false`)
 * and each puts back what it fakes; test/support/hermetic-setup.ts fails a file whose worker was handed a
 * replaced timer function.
 */
export class MatrixFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isColumn = (spec: TestSpecification): boolean => spec.moduleId.includes('/conformance/columns/');
    // BaseSequencer keeps each project (and group) contiguous: reorder inside each, stably.
    const blockOf = (spec: TestSpecification): string => `${spec.project.config.sequence.groupOrder}|${spec.project.name}`;
    const position = new Map(sorted.map((spec, index) => [spec, index]));
    const firstOfBlock = new Map<string, number>();
    for (const [index, spec] of sorted.entries()) if (!firstOfBlock.has(blockOf(spec))) firstOfBlock.set(blockOf(spec), index);
    return [...sorted].sort(
      (a, b) =>
        firstOfBlock.get(blockOf(a))! - firstOfBlock.get(blockOf(b))! ||
        Number(isColumn(b)) - Number(isColumn(a)) ||
        position.get(a)! - position.get(b)!,
    );
  }
}
