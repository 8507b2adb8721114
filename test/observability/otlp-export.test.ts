import { createServer, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRequest } from '../../conformance/drivers/grpc.ts';
import { grpcFrame, rawGrpc } from '../grpc/raw-grpc.ts';
import { startInProcess } from '../support/in-process-app.ts';
import { listenLocal } from '../support/ports.ts';
import { TRANSPORTS } from '../support/transports.ts';

/** One span as an OTLP/HTTP JSON export carries it (opentelemetry-proto, JSON encoding: hex ids). */
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, string | number>;
  readonly service: string;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: OtlpValue }[] };
    scopeSpans: { spans: (Omit<OtlpSpan, 'attributes' | 'service'> & { attributes: { key: string; value: OtlpValue }[] })[] }[];
  }[];
}

const SPAN_KIND_SERVER = 2;
const attributes = (list: { key: string; value: OtlpValue }[]): Record<string, string | number> =>
  Object.fromEntries(list.map(({ key, value }) => [key, value.stringValue ?? Number(value.intValue)]));

/** A real OTLP/HTTP receiver: POST /v1/traces, JSON body decoded into spans. */
async function startReceiver(): Promise<{ port: number; spans: OtlpSpan[]; bodies: string[]; close: () => void }> {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method === 'POST' && req.url === '/v1/traces' && req.headers['content-type'] === 'application/json') {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      const body = JSON.parse(bodies.at(-1)!) as OtlpExport;
      for (const { resource, scopeSpans } of body.resourceSpans) {
        const service = String(attributes(resource.attributes)['service.name']);
        for (const scope of scopeSpans)
          for (const span of scope.spans) spans.push({ ...span, attributes: attributes(span.attributes), service });
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  return { port: await listenLocal(server), spans, bodies, close: () => server.close() };
}

const hex = (bytes: number): string => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');

describe('spans reach a real OTLP/HTTP receiver (rules TRACE-context, TRACE-server-kind, TRACE-grpc, TRACE-log-ids)', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => (receiver = await startReceiver()));
  afterAll(() => receiver.close());

  it.each(TRANSPORTS.map((t) => [t.name, t] as const))(
    '%s: a REST call carrying a traceparent (and a gRPC call on orders-grpc) is one SERVER span in the caller trace, its log lines carry the trace id',
    async (name, transport) => {
      const app = await startInProcess({
        transport: transport.factory,
        serviceName: `orders-${name}`,
        env: { OTLP_ENDPOINT: `127.0.0.1:${receiver.port}` },
      });
      const rest = { traceId: hex(16), parent: hex(8) };
      const grpc = { traceId: hex(16), parent: hex(8) };
      const secrets: string[] = [];
      try {
        const password = await app.addUser(`otlp-${name}`);
        const login = await fetch(`${app.baseUrl}/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', traceparent: `00-${rest.traceId}-${rest.parent}-01` },
          body: JSON.stringify({ username: `otlp-${name}`, password }),
        });
        expect(login.status).toBe(200);
        secrets.push(password, ((await login.json()) as { token: string }).token, app.jwtSecret);
        if (transport.drivers.includes('grpc')) {
          const message = encodeRequest('Login', { username: `otlp-${name}`, password: 'wrong' });
          const reply = await rawGrpc(app.baseUrl, '/ordersv1.Orders/Login', grpcFrame(message), {
            traceparent: `00-${grpc.traceId}-${grpc.parent}-01`,
          });
          expect(reply.grpcStatus).toBe('16');
        }
      } finally {
        await app.stop(); // the tracer's Stop flushes the batch to the receiver
      }
      const ours = receiver.spans.filter((s) => s.service === `orders-${name}`);
      /** The one span of the call's trace: a SERVER span whose parent is the caller's span. */
      const serverSpanOf = (call: typeof rest, name: string, attributes: OtlpSpan['attributes']): OtlpSpan => {
        const spans = ours.filter((s) => s.traceId === call.traceId);
        expect(spans).toHaveLength(1);
        expect(spans[0]).toMatchObject({ parentSpanId: call.parent, kind: SPAN_KIND_SERVER, name, attributes });
        return spans[0]!;
      };
      const restSpan = serverSpanOf(rest, 'POST /auth/login', {
        'http.route': '/auth/login',
        'http.request.method': 'POST',
        'http.response.status_code': 200,
      });
      const requestLines = app.logs.lines.filter((l) => l.msg === 'request' && l['path'] === '/auth/login');
      expect(requestLines.map((l) => [l['trace_id'], l['span_id']])).toStrictEqual([[rest.traceId, restSpan.spanId]]);
      if (transport.drivers.includes('grpc')) {
        const grpcSpan = serverSpanOf(grpc, 'ordersv1.Orders/Login', {
          'rpc.system': 'grpc',
          'rpc.service': 'ordersv1.Orders',
          'rpc.method': 'Login',
          'rpc.grpc.status_code': 16,
        });
        expect(Object.keys(grpcSpan.attributes).filter((k) => k.startsWith('http.'))).toStrictEqual([]);
      }
      // No password, token or JWT_SECRET in what was exported or logged.
      const exported = [...receiver.bodies, ...app.logs.raw].join('\n');
      for (const secret of secrets) expect(exported.includes(secret), 'a secret reached a span export or a log line').toBe(false);
    },
  );
});
