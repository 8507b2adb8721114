/**
 * Compares the answers of one seed's runs (run.ts) and reports where they part (test/differential/README.md).
 * Answers are compared after normalising what legitimately differs between runs: ids become labels in order
 * of first appearance (id#1, id#2, ...), times become offsets from the seed's clock start (t+1000ms), a token
 * becomes <token>. Everything else, statuses, items, quantities, list order and counts, must be equal.
 */
import type { Answer } from './run.ts';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;

/** One line per answer: `<status> <normalised body>`. */
export function normalise(answers: readonly Answer[], clockStartMs: number): string[] {
  const labels = new Map<string, string>();
  return answers.map(({ status, body }) => {
    const text = JSON.stringify(body)
      .replace(/"token":"[^"]*"/g, '"token":"<token>"')
      .replace(UUID, (id) => {
        const key = id.toLowerCase();
        let label = labels.get(key);
        if (label === undefined) {
          label = `id#${labels.size + 1}`;
          labels.set(key, label);
        }
        return label;
      })
      .replace(ISO_TIME, (time) => `t+${Date.parse(time) - clockStartMs}ms`);
    return `${status} ${text}`;
  });
}

export interface SeedRuns {
  readonly seed: number;
  readonly clockStartMs: number;
  /** What each side answered, step by step: the fakes on the left, the real backends (or a reference) on the right. */
  readonly left: readonly Answer[];
  readonly right: readonly Answer[];
}

export interface Difference {
  readonly seed: number;
  /** 1-based: the first answer that differs. */
  readonly answer: number;
  readonly of: number;
  readonly step: string;
  readonly left: string;
  readonly right: string;
}

/** The first answer at which the two runs of a seed part, or undefined when every answer is the same. */
export function firstDifference(runs: SeedRuns): Difference | undefined {
  const left = normalise(runs.left, runs.clockStartMs);
  const right = normalise(runs.right, runs.clockStartMs);
  const length = Math.max(left.length, right.length);
  for (let i = 0; i < length; i++) {
    if (left[i] === right[i]) continue;
    const step = runs.left[i]?.step ?? runs.right[i]?.step ?? '?';
    return { seed: runs.seed, answer: i + 1, of: length, step, left: left[i] ?? '(no answer)', right: right[i] ?? '(no answer)' };
  }
  return undefined;
}

/** The check's verdict over every seed: one line of totals, then each differing seed's first difference. */
export function report(
  all: readonly SeedRuns[],
  names: readonly [string, string] = ['fakes', 'real'],
): { readonly differences: readonly Difference[]; readonly text: string } {
  const differences = all.map(firstDifference).filter((d): d is Difference => d !== undefined);
  const width = Math.max(names[0].length, names[1].length) + 1;
  const lines = [`differential (${names[0]} vs ${names[1]}): ${all.length} seeds, ${differences.length} with a difference`];
  for (const d of differences) {
    const at = firstDifferingCharacter(d.left, d.right);
    lines.push(`seed ${d.seed}: answer ${d.answer} of ${d.of} differs (${d.step}), from character ${at + 1}`);
    lines.push(`  ${`${names[0]}:`.padEnd(width)} ${around(d.left, at)}`);
    lines.push(`  ${`${names[1]}:`.padEnd(width)} ${around(d.right, at)}`);
  }
  return { differences, text: lines.join('\n') };
}

/** A report line stays readable: the answer from a little before where the two part, cut after a while. */
const BEFORE_CHARS = 60;
const AFTER_CHARS = 240;

function firstDifferingCharacter(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function around(answer: string, at: number): string {
  const start = Math.max(0, at - BEFORE_CHARS);
  const end = at + AFTER_CHARS;
  return `${start > 0 ? '…' : ''}${answer.slice(start, end)}${end < answer.length ? '…' : ''}`;
}
