import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { natsConfigFromEnv } from '../../src/adapters/nats/config.ts';
import { NatsEventBus } from '../../src/adapters/nats/event-bus.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import { HANG_GUARD_MS, settled, settlesBefore } from '../support/eventually.ts';
import { LogCapture } from '../support/log-capture.ts';
import { sampleEnvelope } from './order-events.contract.ts';

const silent = pino({ enabled: false });
/** NatsEventBus's connectTimeoutMs when none is given. */
const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;

// Missing, never echoing a malformed value, and the default subject: src/config/rules.test.ts.
describe('natsConfigFromEnv (spec 8.1)', () => {
  it('reads a URL with a scheme, or a comma-separated list of them', () => {
    expect(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:4222' })).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      display: 'nats://127.0.0.1:4222',
    });
    expect(natsConfigFromEnv({ NATS_URL: 'nats://a:4222, tls://b:4223' })).toEqual({
      servers: ['nats://a:4222', 'tls://b:4223'],
      display: 'nats://a:4222,tls://b:4223',
    });
  });

  it('keeps credentials out of the display form', () => {
    const config = natsConfigFromEnv({ NATS_URL: 'nats://user:hunter2@broker:4222' });
    expect(config.display).toBe('nats://broker:4222');
  });

  // nats.js ignores a URL's user-info: the broker refused a NATS_URL that carried its credentials.
  it('hands the URL user-info to the client as options, decoded, and the servers without it', () => {
    expect(natsConfigFromEnv({ NATS_URL: 'nats://orders:p%40ss%3Aw0rd@a:4222,nats://b:4222' })).toEqual({
      servers: ['nats://a:4222', 'nats://b:4222'],
      display: 'nats://a:4222,nats://b:4222',
      credentials: { user: 'orders', pass: 'p@ss:w0rd' },
    });
    // A user without a password is a token (the NATS convention, nats-server --auth).
    expect(natsConfigFromEnv({ NATS_URL: 'tls://s3cret-token@a:4222' }).credentials).toEqual({ token: 's3cret-token' });
    expect(natsConfigFromEnv({ NATS_URL: 'nats://a:4222' })).not.toHaveProperty('credentials');
    expect(natsConfigFromEnv({ NATS_URL: 'nats://u:p@a:4222, nats://u:p@b:4222' }).credentials).toEqual({ user: 'u', pass: 'p' });
    // A password with no user is still credentials (an empty user), not a URL without any.
    expect(natsConfigFromEnv({ NATS_URL: 'nats://:s3cret@a:4222' }).credentials).toEqual({ user: '', pass: 's3cret' });
  });

  it.each([
    ['nats://u:pw-one@a:4222,nats://u:pw-two@b:4222', /servers carry different credentials/],
    ['nats://u:%zz@a:4222', /credentials are not valid percent-encoding/],
  ])('[CONFIG-no-secret-echo] refuses %j without echoing it', (value, message) => {
    const refusal = (() => {
      try {
        natsConfigFromEnv({ NATS_URL: value });
      } catch (err) {
        return err as Error;
      }
      return undefined;
    })();
    expect(refusal?.message).toMatch(message);
    expect(refusal?.message).not.toMatch(/pw-|%zz/);
  });

  // The scheme must start the value and the host end it: no path, nothing before the scheme, a host at all.
  it.each([
    '127.0.0.1:4222',
    'broker',
    'http://broker:4222',
    'nats://',
    'nats://a:4222,b:4222',
    'xnats://broker:4222',
    'nats://broker:4222/path',
    'nats://?x',
    'nats://a:b:c',
  ])('[CONFIG-formats] rejects %j', (value) => {
    expect(() => natsConfigFromEnv({ NATS_URL: value })).toThrow(/NATS_URL must be a URL with a scheme/);
  });
});

describe('NatsEventBus start-up (spec 3.4 rule 2)', () => {
  it('init against a closed port fails fast with an error naming NATS_URL', async () => {
    const bus = new NatsEventBus(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:1' }), silent);
    const failure = await bus.init().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ErrUnavailable);
    expect((failure as Error).message).toMatch(/^publisher: cannot connect to NATS_URL \(nats:\/\/127\.0\.0\.1:1\)/);
    expect((failure as Error).cause).toBeInstanceOf(Error);
    await expect(bus.health()).rejects.toThrow(new ErrUnavailable('publisher: not connected'));
    await expect(bus.publishOrderPlaced(sampleEnvelope())).rejects.toThrow(new ErrUnavailable('publisher: publish: not connected'));
    await bus.stop();
  });

  it('a broker that accepts the connection but never answers fails init at connectTimeoutMs, which the option sets', async () => {
    const sockets: Socket[] = [];
    const silentServer = createServer((socket) => void sockets.push(socket));
    silentServer.listen(0, '127.0.0.1');
    await once(silentServer, 'listening');
    const { port } = silentServer.address() as { port: number };
    const bus = (connectTimeoutMs: number) =>
      new NatsEventBus({ servers: [`nats://127.0.0.1:${port}`], display: `nats://127.0.0.1:${port}` }, silent, { connectTimeoutMs });
    try {
      const init = bus(100).init();
      await settled(init, 'init given up at the connect timeout');
      await expect(init).rejects.toThrow(/^publisher: cannot connect to NATS_URL/);
      // The option is what bounds it: a longer one still waits once the bus's default (2 s) has passed. A
      // timer firing late never makes a pending init settle, so no machine is too slow for this.
      const patient = bus(10 * HANG_GUARD_MS).init();
      patient.catch(() => undefined);
      expect(await settlesBefore(patient, DEFAULT_CONNECT_TIMEOUT_MS + 500)).toBe(false);
    } finally {
      for (const socket of sockets) socket.destroy();
      silentServer.close();
    }
  });

  it('before init: consume rejects with ErrUnavailable, drain does nothing and logs nothing, connected() is false', async () => {
    const capture = new LogCapture();
    const bus = new NatsEventBus(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:1' }), pino({ level: 'debug' }, capture));
    expect(bus.connected()).toBe(false);
    await expect(bus.consumeOrderPlaced(() => undefined, new AbortController().signal)).rejects.toThrow(
      new ErrUnavailable('publisher: consume: not connected'),
    );
    await expect(bus.drainOrderPlaced(() => undefined, 1_000)).resolves.toBeUndefined();
    expect(capture.lines).toEqual([]);
  });
});
