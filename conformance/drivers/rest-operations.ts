import { setTimeout as sleep } from 'node:timers/promises';
import { adminProbe } from './rest-reply.ts';
import { operations, type Driver, type DriverOptions, type RawRequest, type Reply } from './driver.ts';

type Send = (request: RawRequest) => Promise<Reply>;

/**
 * A REST driver from its wire: every REST driver retries 429s the same way (when asked), reports each
 * exchange to the observer and offers the same operations (each operation's REST request from
 * driver.ts OPERATIONS), whatever carries the bytes.
 */
export function restDriver(name: Driver['name'], send: Send, options: DriverOptions, close: () => Promise<void>): Driver {
  const observed = async (raw: RawRequest): Promise<Reply> => {
    let reply = await send(raw);
    for (let attempt = 0; options.retryRateLimited && reply.status === 429 && attempt < 10; attempt++) {
      await sleep(Math.max(1, Number(reply.headers?.['retry-after']) || 1) * 1000);
      reply = await send(raw);
    }
    options.observe?.(raw, reply);
    return reply;
  };
  return {
    name,
    api: 'rest',
    ...operations((forms) => observed(forms.rest())),
    raw: observed,
    admin: options.adminUrl === undefined ? undefined : adminProbe(options.adminUrl),
    hooks: options.hooks,
    close,
  };
}
