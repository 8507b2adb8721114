// /simulator on the admin listener: the simulator's control API over HTTP (rules SIM-*).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdminRoutes } from '../src/transports/http/admin/admin-handler.ts';
import type { Simulator } from './simulator.ts';
import { ErrMalformedBody } from '../src/transports/errors/request-errors.ts';
import { toHttpError } from '../src/transports/http/rest/http-errors.ts';
import { readBody } from '../src/transports/http/rest/request-body.ts';

/** A control request is a few fields: anything longer is refused unread (rule SIM-embedded-only). */
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
 * The embedded simulator's control API on the admin listener (rules SIM-*). Answers whether the path is
 * its own (true) or not (false: the admin listener's 404). Errors come from the one table, as Error bodies.
 */
export function simulatorRoutes(simulator: Simulator): AdminRoutes {
  return async (req, res, { pathname: path }) => {
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
  };
}
