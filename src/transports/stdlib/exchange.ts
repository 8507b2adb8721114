import type { IncomingMessage, ServerResponse } from 'node:http';

/** One request/response pair travelling down the node:http chain. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** Aborts when the response is finished or the connection dropped: the request's done signal. */
  readonly signal: AbortSignal;
  /** Filled in by the router; read by the outer layers after the response (spec 4.5 route label). */
  route: string | undefined;
}

export type Handler = (exchange: Exchange) => Promise<void>;
export type Middleware = (next: Handler) => Handler;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: message }, headers);
}
