// The runner's OTLP/HTTP trace receiver: how a case reads the spans of a process it cannot reach into
// (a spawned executable, an external instance pointed at it with OTLP_ENDPOINT). Hand-written because
// it is small and the runner needs nothing of a collector but the spans: POST /v1/traces with the
// OTLP/HTTP JSON encoding (what @opentelemetry/exporter-trace-otlp-http sends, gzip or not); the
// protobuf encoding is answered 415, so an exporter sending it fails loudly rather than silently.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** A finished span as a case reads it, whether from an in-memory exporter or from OTLP. */
export interface SeenSpan {
  readonly name: string;
  /** The API's SpanKind (SERVER = 1); OTLP's kind is one more. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly resource: Readonly<Record<string, unknown>>;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly traceFlags: number;
  /** SpanStatusCode: UNSET 0, OK 1, ERROR 2 (the same numbers in OTLP). */
  readonly statusCode: number;
}

export function seenSpanOf(span: ReadableSpan): SeenSpan {
  const context = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    attributes: span.attributes,
    resource: span.resource.attributes,
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    traceFlags: context.traceFlags,
    statusCode: span.status.code,
  };
}

interface OtlpValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value?: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  flags?: number;
  attributes?: OtlpAttribute[];
  status?: { code?: number };
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function valueOf(value: OtlpValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  // int64 travels as a string in OTLP/JSON; the spans here carry small integers (status codes, ports).
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: readonly OtlpAttribute[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

/** Spans of one OTLP/HTTP JSON export request. */
export function spansOfExport(request: OtlpRequest): SeenSpan[] {
  const spans: SeenSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        spans.push({
          name: s.name,
          kind: (s.kind ?? 1) - 1,
          attributes: attributesOf(s.attributes),
          resource,
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId === undefined || s.parentSpanId === '' ? undefined : s.parentSpanId,
          traceFlags: (s.flags ?? 0) & 0xff,
          statusCode: s.status?.code ?? 0,
        });
  }
  return spans;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

/** An OTLP/HTTP receiver on `host:port` (port 0: any); `endpoint` is what OTLP_ENDPOINT takes. */
export class OtlpReceiver {
  /** Every span received so far, in arrival order. */
  readonly spans: SeenSpan[];
  readonly #server: Server;

  private constructor(server: Server, spans: SeenSpan[]) {
    this.#server = server;
    this.spans = spans;
  }

  static async start(host = '127.0.0.1', port = 0): Promise<OtlpReceiver> {
    const spans: SeenSpan[] = [];
    const server = createServer((req, res) => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      if (!String(req.headers['content-type']).startsWith('application/json'))
        return void res.writeHead(415, { 'content-type': 'text/plain' }).end('this receiver takes OTLP/HTTP JSON (application/json)');
      bodyOf(req)
        .then((body) => spansOfExport(JSON.parse(body.toString('utf8')) as OtlpRequest))
        .then(
          (received) => {
            spans.push(...received);
            res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
          },
          () => res.writeHead(400).end(),
        );
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
    return new OtlpReceiver(server, spans);
  }

  /** host:port, as OTLP_ENDPOINT takes it. */
  get endpoint(): string {
    const { address, port } = this.#server.address() as AddressInfo;
    return `${address}:${port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
