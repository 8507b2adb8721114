import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { natsConfigFromEnv } from '../../src/adapters/nats/nats-config.ts';
import { NatsEventBus } from '../../src/adapters/nats/nats-event-bus.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import { sampleEnvelope } from './order-events.contract.ts';

const silent = pino({ enabled: false });

// Missing, never echoing a malformed value, and the default subject: src/config/config-rules.test.ts.
describe('natsConfigFromEnv (spec 8.1)', () => {
  it('reads a URL with a scheme, or a comma-separated list of them', () => {
    expect(natsConfigFromEnv({ NATS_URL: 'nats://127.0.0.1:4222' })).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      display: 'nats://127.0.0.1:4222',
    });
    expect(natsConfigFromEnv({ NATS_URL: 'nats://a:4222, tls://b:4223' }).servers).toEqual(['nats://a:4222', 'tls://b:4223']);
  });

  it('keeps credentials out of the display form', () => {
    const config = natsConfigFromEnv({ NATS_URL: 'nats://user:hunter2@broker:4222' });
    expect(config.display).toBe('nats://broker:4222');
  });

  it.each(['127.0.0.1:4222', 'broker', 'http://broker:4222', 'nats://', 'nats://a:4222,b:4222'])('rejects %j', (value) => {
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
    await expect(bus.health()).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(bus.publishOrderPlaced(sampleEnvelope())).rejects.toBeInstanceOf(ErrUnavailable);
    await bus.stop();
  });
});
