#!/usr/bin/env node
// Hostile clients against an `--embedded` executable, black-box, with the server's RSS sampled from
// /proc and a bystander reading its own order every 100 ms from another loopback address. The figures
// the tests may not assert (RSS in MiB, latencies) are printed here. Loopback only; every loop is
// bounded in count and time. Usage:
//   npm run attacks -- [--only slots,zero-window,pipeline,hpack,connections] [--hold-seconds 40]
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { hpack, manyConnections, pipeline, slots, zeroWindow } from '../../test/support/edge-attacks.ts';
import { sampleRss, startBystander, startTarget, type EdgeTarget, type Executable } from '../../test/support/edge-target.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'slots,zero-window,pipeline,hpack,connections' },
    'hold-seconds': { type: 'string', default: '40' },
    connections: { type: 'string' },
  },
});
const only = new Set(values.only.split(','));
const holdMs = Number(values['hold-seconds']) * 1000;

/**
 * As the bench does: the server on core 0, this process (attackers and the bystander's thread) on core
 * 1, so that an attacker writing as fast as it can takes its own core, not the server's (on two cores,
 * unpinned, the attacker and the kernel copying its bytes took most of both).
 */
function pin(pid: number, cpu: number): boolean {
  if (availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-pc', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const pinned = pin(process.pid, 1);
console.log(pinned ? 'attackers and bystander on core 1, each server on core 0' : 'not pinned (needs taskset and two cores)');

async function withTarget(executable: Executable, name: string, attack: (t: EdgeTarget) => Promise<string>): Promise<void> {
  const target = await startTarget(executable);
  if (pinned) pin(target.bin.child.pid!, 0);
  await sleep(500);
  const before = target.rssMiB();
  const rss = sampleRss(target);
  const bystander = startBystander(target);
  let outcome: string;
  try {
    outcome = await attack(target);
  } catch (error) {
    outcome = `attack failed: ${String(error)}`;
  }
  const b = await bystander.stop();
  const peak = rss.stop();
  console.log(`${name} vs orders-${executable}: ${outcome}`);
  console.log(
    `  RSS ${before.toFixed(0)} MiB -> peak ${peak.toFixed(0)} MiB (+${(peak - before).toFixed(0)}); bystander ${b.answered}/${b.asked} answered, ${b.failed} failed, ` +
      `p50 ${b.p50.toFixed(1)} ms, p99 ${b.p99.toFixed(1)} ms, max ${b.max.toFixed(1)} ms`,
  );
  await target.stop();
}

if (only.has('slots')) await withTarget('grpc', 'slots', slots);
if (only.has('zero-window')) await withTarget('grpc', 'zero-window', (t) => zeroWindow(t, Number(values.connections ?? 150), holdMs));
if (only.has('pipeline')) await withTarget('stdlib', 'pipeline', (t) => pipeline(t, Number(values.connections ?? 30), holdMs));
if (only.has('hpack')) await withTarget('grpc', 'hpack', (t) => hpack(t, Math.min(holdMs, 10_000) / 1000));
if (only.has('connections')) await withTarget('grpc', 'connections', (t) => manyConnections(t, Number(values.connections ?? 5000)));
