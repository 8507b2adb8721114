// A handler served on loopback for one test, and single requests to it on their own connections through
// node:http, so every header is seen as sent (`connection` too): the admin listener's route tests.
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { onTestFinished } from 'vitest';
import { listenLocal } from './ports.ts';
import { HANG_GUARD_MS } from './eventually.ts';

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** Serves `handler` on loopback until the test finishes; returns the port. */
export async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, strict = false): Promise<number> {
  const server = createServer({ rejectNonStandardBodyWrites: strict }, handler);
  const port = await listenLocal(server);
  onTestFinished(() => void server.close());
  return port;
}

/** One request on its own keep-alive connection, closed once answered; a second at most. */
export function send(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const agent = new Agent({ keepAlive: true });
  return new Promise<Answer>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent, timeout: HANG_GUARD_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer (a hang)`)));
    req.on('error', reject);
    req.end(body);
  }).finally(() => agent.destroy());
}

export const NOT_FOUND = { status: 404, headers: { 'content-type': 'application/json' }, text: '{"error":"not found"}' };
