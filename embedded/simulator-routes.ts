// /simulator on the admin listener: the simulator's control API over HTTP (rules SIM-*). It answers whether
// the path was its own (false: the admin listener's 404); errors come from the one table, as Error bodies.
import type { ServerResponse } from 'node:http';
import type { AdminRoutes } from '../src/transports/http/admin/admin-handler.ts';
import { mapError } from '../src/transports/errors/table.ts';
import { readJsonBody } from './json-body.ts';
import type { Simulator } from './simulator.ts';

/** A control request is a few fields: anything longer is refused unread (rule SIM-embedded-only). */
export const SIMULATOR_BODY_LIMIT = 1024;

const COMPONENT_PATH = /^\/simulator\/components\/([^/]+)$/;

function send(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  return true;
}

export function simulatorRoutes(simulator: Simulator): AdminRoutes {
  return async (req, res, { pathname: path }) => {
    const component = COMPONENT_PATH.exec(path)?.[1];
    const body = (): Promise<unknown> => readJsonBody(req, SIMULATOR_BODY_LIMIT);
    try {
      switch (`${req.method} ${component === undefined ? path : '/simulator/components/{name}'}`) {
        case 'GET /simulator':
          return send(res, 200, simulator.state());
        case 'PUT /simulator/components/{name}':
          return send(res, 200, simulator.setComponent(component as string, await body()));
        case 'POST /simulator/clock/advance':
          return send(res, 200, simulator.advance(await body()));
        case 'POST /simulator/reset':
          return send(res, 200, simulator.reset());
        default:
          // Any other path or method, inside /simulator or not: the caller's 404.
          return false;
      }
    } catch (error) {
      const answer = mapError(error);
      if (!answer.expected) throw error;
      if (answer.closeConnection) res.setHeader('connection', 'close');
      return send(res, answer.httpStatus, { error: answer.message });
    }
  };
}
