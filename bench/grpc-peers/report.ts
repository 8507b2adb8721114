import type { BenchRun } from '../measurement.ts';

/**
 * Issue 18's comparison: server CPU per gRPC GetOrder call for the service's own gRPC server and the
 * peers measured right after it in the same child (bench/grpc-peers), per backend.
 */
export function renderGrpcPeers(run: BenchRun): string[] {
  const rows = run.measurements.filter((m) => m.scenario === 'grpc-get' && m.pairedFor === undefined && m.result !== undefined);
  if (!rows.some((m) => m.server.includes(' peer:'))) return [];
  const out = ['', '## gRPC GetOrder: this server and its peers (same child, one after the other)', ''];
  out.push('CPU µs per call = server CPU-seconds / calls answered. Peers: a plain @grpc/grpc-js server and Connect (as used before issue 18, and tuned), doing the same work on the same core.');
  out.push('', '| server | calls/s | p50 ms | p99 ms | CPU µs per call | vs grpc-js |', '| --- | --- | --- | --- | --- | --- |');
  for (const m of rows) {
    const own = m.server.split(' peer:')[0]!;
    const grpcJs = rows.find((x) => x.server === `${own} peer:grpc-js`)?.cpuSecondsPer1k ?? Number.NaN;
    const share = m.cpuSecondsPer1k / grpcJs;
    out.push(
      `| ${m.server} | ${m.result!.requestsPerSecond.toFixed(0)} | ${m.result!.p50Ms.toFixed(2)} | ${m.result!.p99Ms.toFixed(2)} | ${(m.cpuSecondsPer1k * 1000).toFixed(0)} | ${Number.isFinite(share) ? `${share.toFixed(2)}×` : '–'} |`,
    );
  }
  return out;
}
