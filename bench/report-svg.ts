import { SCENARIO_TITLES, type BenchRun, type ScenarioId } from './measure.ts';
import { find, FIXED_CONCURRENCY, rps } from './report.ts';

const GROUPS: readonly ScenarioId[] = ['get', 'grpc-get', 'list', 'post', 'bare-insert', 'login'];
const WIDTH = 960;
const LABEL_W = 190;
const BAR_MAX_W = 620;
const BAR_H = 16;
const BAR_GAP = 4;
const GROUP_GAP = 26;
const TOP = 56;

const LEGEND = [
  ['baseline (bare node:http)', '#6b7280'],
  ['embedded fakes', '#60a5fa'],
  ['real Postgres/Redis/NATS', '#1d4ed8'],
] as const;

function esc(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

const colour = (server: string): string => LEGEND[server === 'baseline' ? 0 : server.endsWith('/real') ? 2 : 1][1];

/**
 * Hand-written horizontal bar chart: one group per scenario at 32 connections, one bar per server,
 * each group scaled to its own largest bar (login is ~100× slower than a cache hit, so one shared
 * axis would flatten everything else). The number is printed on every bar.
 */
export function renderSvg(run: BenchRun): string {
  const servers = [...new Set(run.measurements.map((m) => m.server))];
  const parts: string[] = [];
  let y = TOP;
  for (const scenario of GROUPS) {
    const bars = servers
      .map((server) => ({ server, value: rps(find(run, server, scenario, FIXED_CONCURRENCY)) }))
      .filter((bar) => Number.isFinite(bar.value));
    if (bars.length === 0) continue;
    const max = Math.max(...bars.map((bar) => bar.value));
    const groupTop = y + 8;
    parts.push(
      `<text x="8" y="${y}" class="group">${esc(SCENARIO_TITLES[scenario])} — requests/s, ${FIXED_CONCURRENCY} connections (scale: this group's max)</text>`,
    );
    y += 8;
    for (const bar of bars) {
      const w = Math.max(1, (bar.value / max) * BAR_MAX_W);
      parts.push(`<text x="${LABEL_W - 8}" y="${y + BAR_H - 4}" class="label" text-anchor="end">${esc(bar.server)}</text>`);
      parts.push(
        `<rect x="${LABEL_W}" y="${y}" width="${w.toFixed(1)}" height="${BAR_H}" fill="${colour(bar.server)}"><title>${esc(`${bar.server}: ${bar.value.toFixed(0)} req/s`)}</title></rect>`,
      );
      parts.push(`<text x="${(LABEL_W + w + 6).toFixed(1)}" y="${y + BAR_H - 4}" class="value">${bar.value.toFixed(0)}</text>`);
      y += BAR_H + BAR_GAP;
    }
    const baseline = bars.find((bar) => bar.server === 'baseline');
    if (scenario === 'get' && baseline !== undefined) {
      // The GET target: half of the baseline's requests/s.
      const x = LABEL_W + (baseline.value / 2 / max) * BAR_MAX_W;
      parts.push(
        `<line x1="${x.toFixed(1)}" y1="${groupTop - 4}" x2="${x.toFixed(1)}" y2="${y - BAR_GAP + 2}" stroke="#dc2626" stroke-dasharray="4 3"/>`,
      );
      parts.push(`<text x="${(x + 4).toFixed(1)}" y="${y + 10}" class="value" fill="#dc2626">target: 50% of baseline</text>`);
      y += 12;
    }
    y += GROUP_GAP;
  }
  const legendY = y;
  LEGEND.forEach(([text, fill], i) => {
    const x = LABEL_W + i * 230;
    parts.push(`<rect x="${x}" y="${legendY - 11}" width="12" height="12" fill="${fill}"/>`);
    parts.push(`<text x="${x + 18}" y="${legendY}" class="label">${esc(text)}</text>`);
  });
  const height = legendY + 20;
  const title = `Throughput per transport and scenario — ${run.settings.quick ? 'quick' : 'full'} run ${run.startedAt.slice(0, 16)}Z, ${run.machine.nproc} × ${run.machine.cpuModel}, Node ${run.machine.node}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif">`,
    '<style>.title{font-size:15px;font-weight:600}.group{font-size:13px;font-weight:600}.label{font-size:12px}.value{font-size:11px}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="8" y="24" class="title">${esc(title)}</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
