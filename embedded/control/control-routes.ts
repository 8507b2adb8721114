// /control on the admin listener, only with --embedded: the test-control API over HTTP (rules CONTROL-*),
// beside /simulator and written the same way: it answers whether the path was its own (false: the admin
// listener's 404), and refusals come from the one error table as Error bodies. GET /control/openapi.yaml
// serves its description (openapi.yaml here), so another runner can learn the protocol from the instance.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { AdminRoutes } from '../../src/transports/http/admin/admin-handler.ts';
import { mapError } from '../../src/transports/errors/table.ts';
import { readJsonBody } from '../json-body.ts';
import type { Control } from './control.ts';

/** A control request is a few fields: anything longer is refused unread (as SIMULATOR_BODY_LIMIT). */
export const CONTROL_BODY_LIMIT = 1024;

const OPENAPI = readFileSync(new URL('./openapi.yaml', import.meta.url));
const RECORD_PATH = /^\/control\/(cache|orders)\/([^/]+)$/;

/** A malformed escape names no record: the caller's 404, never a thrown URIError. */
function recordId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

function send(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  return true;
}

export function controlRoutes(control: Control): AdminRoutes {
  return async (req, res, url) => {
    const path = url.pathname;
    const record = RECORD_PATH.exec(path);
    const body = (): Promise<unknown> => readJsonBody(req, CONTROL_BODY_LIMIT);
    try {
      switch (`${req.method} ${record === null ? path : `/control/${record[1]}/{id}`}`) {
        case 'GET /control/openapi.yaml':
          res.writeHead(200, { 'content-type': 'application/yaml' }).end(OPENAPI);
          return true;
        case 'POST /control/users':
          return send(res, 201, await control.provisionUser(await body()));
        case 'GET /control/events':
          return send(res, 200, control.events({ orderId: url.searchParams.get('order_id'), userId: url.searchParams.get('user_id') }));
        case 'GET /control/cache/{id}':
          return send(res, 200, control.cached(recordId(record![2]!)));
        case 'GET /control/orders/{id}':
          return send(res, 200, control.stored(recordId(record![2]!)));
        case 'GET /control/logs':
          return send(res, 200, control.logs(url.searchParams.get('after')));
        case 'GET /control/faults':
          return send(res, 200, control.faults());
        case 'POST /control/faults':
          return send(res, 200, control.injectFault(await body()));
        default:
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
