import { createServer, request, type ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../../../test/support/fake-timers.ts';
import { LogCapture } from '../../../../test/support/log-capture.ts';
import { listenLocal } from '../../../../test/support/ports.ts';
import { until } from '../../../../test/support/eventually.ts';
import { sessionKeyFromVerifiedSubject } from '../../../domain/session-key.ts';
import { createLogger } from '../../../observability/logger.ts';
import { SessionScope } from '../../../session/scope.ts';
import { REQUEST_ENDED, requestDoneSignal } from './request-ended.ts';

/** One request to a node:http server whose handler is `handle`; resolves with the request's done signal once its response closed. */
async function serveOne(handle: (res: ServerResponse, signal: AbortSignal) => void, clientGoesAway = false): Promise<AbortSignal> {
  let signal: AbortSignal | undefined;
  const closed = new Promise<void>((resolve) => {
    const server = createServer((_req, res) => {
      signal = requestDoneSignal(res);
      res.once('close', () => setImmediate(() => (server.close(), resolve())));
      handle(res, signal);
    });
    void listenLocal(server).then((port) => {
      const req = request({ port, host: '127.0.0.1', path: '/' }, (answer) => answer.resume());
      req.on('error', () => undefined);
      req.end();
      if (clientGoesAway) void until(() => signal !== undefined, 'the request').then(() => req.destroy());
    });
  });
  await closed;
  if (signal === undefined) throw new Error('no request reached the handler');
  return signal;
}

describe('a request done signal (spec 3.2 rule 2)', () => {
  it('[SESSION-R2-fallback] a lease the handler forgot is released when the response closes', async () => {
    const scope = new SessionScope({ recentCapacity: 10, logger: createLogger('info', new LogCapture()), timers: new FakeTimers() });
    const signal = await serveOne((res, done) => {
      scope.acquire({ sessionKey: sessionKeyFromVerifiedSubject('alice'), signal: done }); // never released by the handler
      res.end('ok');
    });
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(REQUEST_ENDED);
    await until(() => scope.counts().lingering === 1, 'the fallback release');
    expect(scope.counts()).toEqual({ live: 0, lingering: 1 });
  });

  it('aborts when the client goes away before the handler answered', async () => {
    const signal = await serveOne(() => undefined, true);
    expect(signal.aborted).toBe(true);
  });

  it('skips the abort (an Event per request) when the handler answered and nothing listens', async () => {
    const signal = await serveOne((res) => res.end('ok'));
    expect(signal.aborted).toBe(false);
  });
});
