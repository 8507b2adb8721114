// The JSON body of an admin-listener request of the embedded ring (the simulator's and the control API's
// routes): read up to `limit` bytes through the transports' own reader, undecodable JSON a malformed body (400).
import type { IncomingMessage } from 'node:http';
import { ErrMalformedBody } from '../src/transports/errors/table.ts';
import { readBody } from '../src/transports/http/rest/request.ts';

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const text = await readBody(req, limit);
  try {
    return JSON.parse(text);
  } catch {
    throw new ErrMalformedBody();
  }
}
