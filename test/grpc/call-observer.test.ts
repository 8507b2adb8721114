import { connect } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScrape } from '../../conformance/cases/observability.ts';
import { grpcTransport } from '../../src/transports/grpc/grpc-transport.ts';
import { until } from '../support/eventually.ts';
import { startInProcess, type InProcessApp } from '../support/in-process-app.ts';
import { grpcFrame, rawGrpc } from './raw-grpc.ts';

/**
 * Rules TRACE-grpc and METRICS-grpc at the edges the conformance case does not reach: paths the server
 * does not serve (bounded labels), a call its client resets, a call past its deadline. A served call's span and
 * counters are conformance's grpc-layer-spans-and-metrics.
 */
describe('the gRPC layer observes every call, however it ends', () => {
  let app: InProcessApp;
  let token: string;
  beforeAll(async () => {
    app = await startInProcess({ transport: grpcTransport });
    token = await app.login('observer');
  });
  afterAll(() => app.stop());

  const handled = async (labels: Record<string, string>): Promise<number> =>
    parseScrape(await (await fetch(`${app.adminUrl}/metrics`)).text())
      .filter((s) => s.name === 'grpc_server_handled_total' && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  const spansOf = (name: string) => app.spans.getFinishedSpans().filter((s) => s.name === name);

  /** A GetOrder whose message never finishes arriving: the prefix promises 100 bytes, 10 come. */
  function unfinishedGetOrder(headers: Record<string, string>): { close: () => void; closed: Promise<void> } {
    const session = connect(app.baseUrl);
    const stream = session.request({ ':method': 'POST', ':path': '/ordersv1.Orders/GetOrder', 'content-type': 'application/grpc', authorization: `Bearer ${token}`, ...headers });
    stream.on('error', () => undefined);
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(100, 1);
    stream.write(Buffer.concat([prefix, Buffer.alloc(10)]));
    const closed = new Promise<void>((resolve) => stream.once('close', () => (session.destroy(), resolve())));
    // Dropping the connection: Node's client would end the request (END_STREAM) before an RST_STREAM.
    return { close: () => session.destroy(), closed };
  }

  it('paths the server does not serve are counted and traced as unknown: no raw path becomes a label', async () => {
    const before = await handled({ grpc_service: 'unknown', grpc_method: 'unknown', grpc_code: 'Unimplemented' });
    const probe = `/probe.${crypto.randomUUID().slice(0, 8)}/Scan`;
    for (const path of [probe, '/ordersv1.Orders/NoSuchMethod']) expect((await rawGrpc(app.baseUrl, path, grpcFrame(new Uint8Array()))).grpcStatus).toBe('12');
    expect(await handled({ grpc_service: 'unknown', grpc_method: 'unknown', grpc_code: 'Unimplemented' })).toBe(before + 2);
    const scrape = await (await fetch(`${app.adminUrl}/metrics`)).text();
    expect(scrape).not.toContain('NoSuchMethod');
    expect(scrape).not.toContain(probe.split('/')[1]);
    const spans = spansOf('grpc.unknown').slice(-2);
    expect(spans.map((s) => [s.attributes['rpc.system'], s.attributes['rpc.method'], s.attributes['rpc.grpc.status_code']])).toStrictEqual([
      ['grpc', undefined, 12],
      ['grpc', undefined, 12],
    ]);
  });

  it('a call whose client goes away before the answer ends CANCELLED in the metrics and its span', async () => {
    const labels = { grpc_method: 'GetOrder', grpc_code: 'Canceled' };
    const before = await handled(labels);
    const spansBefore = spansOf('ordersv1.Orders/GetOrder').length;
    const call = unfinishedGetOrder({});
    // Reset only once the server has started the call.
    await until(async () => (await fetch(`${app.adminUrl}/metrics`).then((r) => r.text())).includes('grpc_server_started_total{grpc_type="unary",grpc_service="ordersv1.Orders",grpc_method="GetOrder"}'), 'the call to start');
    call.close();
    await call.closed;
    await until(async () => (await handled(labels)) === before + 1, 'grpc_server_handled_total{grpc_code="Canceled"} + 1');
    const span = spansOf('ordersv1.Orders/GetOrder').slice(spansBefore).at(-1);
    expect(span?.attributes['rpc.grpc.status_code']).toBe(1);
  });

  it('a call past its deadline ends DEADLINE_EXCEEDED, an error status on its span', async () => {
    const labels = { grpc_method: 'GetOrder', grpc_code: 'DeadlineExceeded' };
    const before = await handled(labels);
    const call = unfinishedGetOrder({ 'grpc-timeout': '200m' });
    await call.closed;
    expect(await handled(labels)).toBe(before + 1);
    const span = spansOf('ordersv1.Orders/GetOrder').at(-1);
    expect([span?.attributes['rpc.grpc.status_code'], span?.status.code]).toStrictEqual([4, 2 /* SpanStatusCode.ERROR */]);
  });
});
