import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Simulator } from '../../../simulator/simulator.ts';
import { ErrMalformedBody, toHttpError } from '../../errors/table.ts';
import { readBody } from '../rest/request.ts';

/** A control request is a few fields: anything longer is refused unread (rule SIM-admin-only). */
export const SIMULATOR_BODY_LIMIT = 1024;

const COMPONENT_PATH = /^\/simulator\/components\/([^/]+)$/;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req, SIMULATOR_BODY_LIMIT);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ErrMalformedBody();
  }
}

/**
 * The embedded simulator's control API on the admin listener (rules SIM-*). Answers whether `path` is
 * its own (true) or not (false: the caller's 404). Errors come from the one table, as Error bodies.
 */
export async function answerSimulator(simulator: Simulator, req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
  const component = COMPONENT_PATH.exec(path)?.[1];
  const route = `${req.method} ${component === undefined ? path : '/simulator/components/{name}'}`;
  try {
    switch (route) {
      case 'GET /simulator':
        send(res, 200, simulator.state());
        return true;
      case 'PUT /simulator/components/{name}':
        send(res, 200, simulator.setComponent(component as string, await jsonBody(req)));
        return true;
      case 'POST /simulator/clock/advance':
        send(res, 200, simulator.advance(await jsonBody(req)));
        return true;
      case 'POST /simulator/reset':
        send(res, 200, simulator.reset());
        return true;
      default:
        // Any other path or method, inside /simulator or not: the caller's 404.
        return false;
    }
  } catch (error) {
    const answer = toHttpError(error);
    if (!answer.expected) throw error;
    if (answer.closeConnection) res.setHeader('connection', 'close');
    send(res, answer.status, { error: answer.message });
    return true;
  }
}
