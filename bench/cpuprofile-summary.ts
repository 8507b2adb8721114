// Summarises a V8 .cpuprofile (node --cpu-prof): self and inclusive time per function and self time
// per package, optionally restricted to a time window. Usage:
//   node bench/cpuprofile-summary.ts FILE.cpuprofile [--from US --to US] [--top 25]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: number[];
}
export interface CpuProfile {
  readonly nodes: ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: number[];
  readonly timeDeltas: number[];
}

export interface Row {
  readonly name: string;
  readonly ms: number;
  readonly share: number;
}

export interface ProfileSummary {
  readonly sampledMs: number;
  readonly samples: number;
  readonly self: Row[];
  readonly inclusive: Row[];
  readonly packages: Row[];
}

const ROOT_MARKER = '/work/';

function shortUrl(url: string): string {
  if (url === '') return '';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const rel = url.replace(/^file:\/\//, '');
  const src = rel.search(/\/(src|fakes|bench|bin)\//);
  return src >= 0 ? rel.slice(src + 1) : rel.includes(ROOT_MARKER) ? rel.slice(rel.indexOf(ROOT_MARKER)) : rel;
}

function frameName(frame: CallFrame): string {
  const fn = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  const where = shortUrl(frame.url);
  return where === '' ? fn : `${fn} ${where}:${frame.lineNumber + 1}`;
}

/** Where a frame's cost belongs: a package, node internals, project code or a V8 pseudo-frame. */
function packageOf(frame: CallFrame): string {
  const url = frame.url;
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] ?? ''}`;
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? url);
  }
  const short = shortUrl(url);
  return short.split('/').slice(0, 2).join('/');
}

export function summarise(profile: CpuProfile, options: { fromUs?: number; toUs?: number; top?: number } = {}): ProfileSummary {
  const top = options.top ?? 25;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<string, number>();
  const inclusiveUs = new Map<string, number>();
  const packageUs = new Map<string, number>();
  let t = profile.startTime;
  let totalUs = 0;
  let count = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (options.fromUs !== undefined && t < options.fromUs) continue;
    if (options.toUs !== undefined && t > options.toUs) break;
    // A sample's weight is the interval until the next one (the usual self-time attribution).
    const weight = profile.timeDeltas[i + 1] ?? delta;
    const node = byId.get(profile.samples[i] as number);
    if (node === undefined) continue;
    if (node.callFrame.functionName === '(idle)') continue;
    count += 1;
    totalUs += weight;
    const name = frameName(node.callFrame);
    selfUs.set(name, (selfUs.get(name) ?? 0) + weight);
    const pkg = packageOf(node.callFrame);
    packageUs.set(pkg, (packageUs.get(pkg) ?? 0) + weight);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      if (frame === undefined || frame.functionName === '(root)') continue;
      const key = frameName(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusiveUs.set(key, (inclusiveUs.get(key) ?? 0) + weight);
    }
  }
  const rows = (map: Map<string, number>): Row[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, share: totalUs === 0 ? 0 : us / totalUs }));
  return { sampledMs: totalUs / 1000, samples: count, self: rows(selfUs), inclusive: rows(inclusiveUs), packages: rows(packageUs) };
}

export function summaryMarkdown(summary: ProfileSummary, heading: string): string {
  const table = (title: string, rows: Row[]): string =>
    [`| ${title} | ms | share |`, '| --- | --- | --- |', ...rows.map((r) => `| \`${r.name.replaceAll('|', '\\|')}\` | ${r.ms.toFixed(0)} | ${(r.share * 100).toFixed(1)}% |`)].join('\n');
  return [
    heading,
    '',
    `${summary.samples} samples, ${summary.sampledMs.toFixed(0)} ms of non-idle CPU in the window.`,
    '',
    table('self time: package / area', summary.packages),
    '',
    table('self time: function', summary.self),
    '',
    table('inclusive time: function (itself + callees)', summary.inclusive),
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { from: { type: 'string' }, to: { type: 'string' }, top: { type: 'string', default: '25' } },
  });
  const file = positionals[0];
  if (file === undefined) {
    process.stderr.write('usage: node bench/cpuprofile-summary.ts FILE.cpuprofile [--from US --to US] [--top N]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const summary = summarise(profile, {
    fromUs: values.from === undefined ? undefined : Number(values.from),
    toUs: values.to === undefined ? undefined : Number(values.to),
    top: Number(values.top),
  });
  process.stdout.write(summaryMarkdown(summary, `## CPU profile: ${file}`));
}
