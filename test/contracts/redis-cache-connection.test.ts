import { randomUUID } from 'node:crypto';
import { connect, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CACHE_TTL_SECONDS, reconnectDelayMs, type RedisConfig } from '../../src/adapters/redis/connection.ts';
import { RedisOrderCache, type RedisOrderCacheOptions } from '../../src/adapters/redis/order-cache.ts';
import { ErrUnavailable } from '../../src/domain/errors.ts';
import type { LogFields, Logger } from '../../src/ports/logger.ts';
import { HANG_GUARD_MS, settled, settlesBefore, until } from '../support/eventually.ts';
import { FakeRedisServer } from '../support/fake-redis-server.ts';
import { sampleOrder } from './order-cache.contract.ts';

/**
 * RedisOrderCache's connection behaviour (spec 3.4 rule 2 at start-up; degrade, one warning, reconnect
 * and one recovery line afterwards), against an in-process Redis stand-in that can hang up, stall or
 * refuse on cue. The same through a real redis-server that is killed: test/faults/redis-outage.test.ts.
 */

interface Line {
  readonly level: string;
  readonly fields: LogFields;
  readonly msg: string;
}

function recordingLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (fields: LogFields, msg: string): void =>
      void lines.push({ level, fields, msg });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const LOST = 'cache: connection lost; reconnecting in the background, reads fall back to the database';
const RESTORED = 'cache: connection restored';

/** RedisOrderCache's connectTimeoutMs and commandTimeoutMs when none is given. */
const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 500;

function configFor(port: number, host = '127.0.0.1'): RedisConfig {
  return { host, port, ttlSeconds: DEFAULT_CACHE_TTL_SECONDS, keyPrefix: 'test:orders:' };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ErrUnavailable);
  return error as Error;
}

describe('reconnectDelayMs', () => {
  it('waits 100 ms more per failed attempt, capped at 1 s so a recovery is noticed within a second', () => {
    expect([1, 2, 5, 9, 10, 11, 50].map(reconnectDelayMs)).toEqual([100, 200, 500, 900, 1_000, 1_000, 1_000]);
  });
});

describe('RedisOrderCache before init', () => {
  it('is the health node `cache`, not connected, and every operation names itself in its ErrUnavailable', async () => {
    const cache = new RedisOrderCache(configFor(1), recordingLogger().logger);
    expect(cache.name).toBe('cache');
    expect(cache.connected()).toBe(false);
    expect((await rejection(cache.get(randomUUID()))).message).toBe('cache: get: not connected');
    expect((await rejection(cache.set(sampleOrder()))).message).toBe('cache: set: not connected');
    expect((await rejection(cache.health())).message).toBe('cache: health: not connected');
  });

  it('a failed init keeps the driver error as the cause and logs no outage: there was no connection to lose', async () => {
    const { logger, lines } = recordingLogger();
    const cache = new RedisOrderCache(configFor(1), logger);
    const error = await rejection(cache.init());
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.message).toBe(`cache: cannot connect to REDIS_ADDR (127.0.0.1:1): ${(error.cause as Error).message}`);
    expect(cache.connected()).toBe(false);
    await cache.stop();
    expect(lines).toEqual([]);
  });

  it('init gives up on a TCP connect that never completes after the connect timeout', async () => {
    // A listener in a worker thread that then blocks: the kernel completes handshakes only until its accept
    // queue is full (backlog 1), after which a SYN goes unanswered, so a connect hangs.
    const release = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
      const server = require('node:net').createServer();
      server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
        parentPort.postMessage(server.address().port);
        Atomics.wait(workerData, 0, 0);
      });`,
      { eval: true, workerData: release },
    );
    const fillers: Socket[] = [];
    try {
      const port = await new Promise<number>((resolve) => worker.once('message', resolve));
      let completed = 0;
      for (let i = 0; i < 4; i += 1)
        fillers.push(
          connect({ host: '127.0.0.1', port })
            .on('connect', () => (completed += 1))
            .on('error', () => undefined),
        );
      // The accept queue is full once two handshakes completed (backlog 1 holds two on Linux).
      await until(() => completed >= 2, 'the listener’s accept queue to fill');
      const cache = new RedisOrderCache(configFor(port), recordingLogger().logger, { connectTimeoutMs: 100 });
      const init = cache.init();
      await settled(init, 'init given up at the connect timeout');
      const error = await rejection(init);
      expect(error.message).toMatch(/^cache: cannot connect to REDIS_ADDR/);
      // The option is what bounds it: a longer one still waits once the cache's default has passed. A timer
      // firing late never makes a pending init settle, so no machine is too slow for this.
      const patient = new RedisOrderCache(configFor(port), recordingLogger().logger, { connectTimeoutMs: 10 * HANG_GUARD_MS });
      const waiting = patient.init();
      waiting.catch(() => undefined);
      expect(await settlesBefore(waiting, DEFAULT_CONNECT_TIMEOUT_MS + 500)).toBe(false);
      await patient.stop();
    } finally {
      for (const socket of fillers) socket.destroy();
      Atomics.store(release, 0, 1);
      Atomics.notify(release, 0);
      await worker.terminate();
    }
  });

  it('an IPv6 host is shown in brackets, as REDIS_ADDR writes it', async () => {
    const cache = new RedisOrderCache(configFor(1, '::1'), recordingLogger().logger);
    expect((await rejection(cache.init())).message).toMatch(/^cache: cannot connect to REDIS_ADDR \(\[::1\]:1\): /);
  });
});

describe('RedisOrderCache against a Redis stand-in', () => {
  let server: FakeRedisServer;
  let log: ReturnType<typeof recordingLogger>;
  let cache: RedisOrderCache;
  let addr: string;

  async function started(options: RedisOrderCacheOptions = {}): Promise<RedisOrderCache> {
    cache = new RedisOrderCache(configFor(server.port), log.logger, options);
    await cache.init();
    return cache;
  }

  const warnings = (): Line[] => log.lines.filter((line) => line.msg === LOST);
  const restorations = (): Line[] => log.lines.filter((line) => line.msg === RESTORED);

  beforeEach(async () => {
    server = new FakeRedisServer();
    addr = `127.0.0.1:${await server.start()}`;
    log = recordingLogger();
  });

  afterEach(async () => {
    await cache?.stop();
    await server.close();
  });

  it('[LIFE-2-init-connect] init connects once, is connected and healthy, and logs nothing', async () => {
    await started();
    expect(cache.connected()).toBe(true);
    await expect(cache.health()).resolves.toBeUndefined();
    expect(server.commands('PING')).toHaveLength(1);
    expect(server.accepted).toBe(1);
    expect(log.lines).toEqual([]);
  });

  it('stop sends QUIT on a ready connection, closes it and logs nothing', async () => {
    await started();
    await cache.stop();
    expect(cache.connected()).toBe(false);
    expect(server.commands('QUIT')).toHaveLength(1);
    await until(() => server.openConnections === 0, 'the connection to close');
    expect(log.lines).toEqual([]);
  });

  it('the SETs issued in one turn leave in one write to the socket (auto-pipelining, for create throughput)', async () => {
    await started();
    const orders = [sampleOrder(), sampleOrder(), sampleOrder()];
    const writes: string[] = [];
    const write = Socket.prototype.write;
    const spy = vi.spyOn(Socket.prototype, 'write').mockImplementation(function (this: Socket, ...args: Parameters<Socket['write']>) {
      if (this.remotePort === server.port) writes.push(String(args[0]));
      return write.apply(this, args);
    });
    try {
      await Promise.all(orders.map((order) => cache.set(order)));
    } finally {
      spy.mockRestore();
    }
    expect(writes).toHaveLength(1);
    for (const order of orders) expect(writes[0]).toContain(order.id);
    expect(server.commands('SET')).toHaveLength(3);
  });

  it('a dropped connection: one warning, health names the outage, no command is queued, then it reconnects and says so once', async () => {
    await started();
    server.mode = 'refuse';
    server.hangUp('fin');
    await until(() => !cache.connected(), 'the client to notice');
    // A reconnect attempt fails too (hung up again): still a single warning for the one outage.
    await until(() => server.accepted >= 2, 'a failed reconnect attempt');
    await sleep(20);
    expect(warnings()).toEqual([{ level: 'warn', fields: { component: 'cache', addr, error: 'connection closed' }, msg: LOST }]);
    expect((await rejection(cache.health())).message).toBe(`cache: not connected to REDIS_ADDR (${addr}); reconnecting`);
    const getError = await rejection(cache.get(randomUUID()));
    expect(getError.message).toMatch(/^cache: get: ./);
    expect(getError.cause).toBeInstanceOf(Error);
    const setError = await rejection(cache.set(sampleOrder()));
    expect(setError.message).toMatch(/^cache: set: ./);
    expect(setError.cause).toBeInstanceOf(Error);
    expect(restorations()).toEqual([]);

    // Between two attempts (the next is 200 ms after the failed one), with the server back: a read issued
    // now must fail at once rather than wait in a queue for the reconnect.
    server.mode = 'up';
    const meanwhile = cache.get(randomUUID()).then(
      () => 'answered',
      (err: unknown) => err,
    );
    await until(() => cache.connected(), 'the client to reconnect');
    expect(await meanwhile).toBeInstanceOf(ErrUnavailable);
    expect(restorations()).toEqual([{ level: 'info', fields: { component: 'cache', addr }, msg: RESTORED }]);
    expect(warnings()).toHaveLength(1);
    const order = sampleOrder();
    await cache.set(order);
    await expect(cache.get(order.id)).resolves.toEqual(order);
    await expect(cache.health()).resolves.toBeUndefined();

    // The next outage is a new one: warned again.
    server.hangUp('fin');
    await until(() => warnings().length === 2, 'the second outage to be warned');
  });

  it('a connection reset is logged with the driver error', async () => {
    await started();
    server.mode = 'refuse';
    server.hangUp('reset');
    await until(() => !cache.connected(), 'the client to notice');
    await until(() => warnings().length > 0, 'the warning');
    expect(warnings()).toEqual([
      { level: 'warn', fields: { component: 'cache', addr, error: expect.stringMatching(/ECONNRESET/) as unknown }, msg: LOST },
    ]);
  });

  it('a stalled server: health, get and set give up after the command timeout', async () => {
    await started({ commandTimeoutMs: 50 });
    server.mode = 'mute';
    const ping = cache.health();
    await settled(ping, 'the ping given up at the command timeout');
    const pingError = await rejection(ping);
    expect(pingError.message).toMatch(/^cache: ping failed: ./);
    expect(pingError.cause).toBeInstanceOf(Error);
    expect((await rejection(cache.get(randomUUID()))).message).toMatch(/^cache: get: ./);
    expect((await rejection(cache.set(sampleOrder()))).message).toMatch(/^cache: set: ./);
  });

  it('a stalled server: the command timeout given is what bounds a command, not the default', async () => {
    const patient = new RedisOrderCache(configFor(server.port), log.logger, { commandTimeoutMs: 10 * HANG_GUARD_MS });
    await patient.init();
    try {
      server.mode = 'mute';
      const ping = patient.health();
      ping.catch(() => undefined);
      // Still waiting once the default has passed: a timer firing late never makes a pending ping settle.
      expect(await settlesBefore(ping, DEFAULT_COMMAND_TIMEOUT_MS + 250)).toBe(false);
    } finally {
      server.hangUp('fin');
      await patient.stop();
    }
  });

  it('stop during an outage ends the reconnect loop: the server back up sees no new connection', async () => {
    await started();
    server.hangUp('fin');
    await until(() => !cache.connected(), 'the client to notice');
    // The first reconnect attempt is due in 100 ms, to a server that would accept it.
    await cache.stop();
    await sleep(400);
    expect(server.accepted).toBe(1);
    expect(server.openConnections).toBe(0);
  });

  it('stop while a reconnect is still in its handshake drops the socket without a QUIT', async () => {
    await started();
    server.mode = 'mute';
    server.hangUp('fin');
    await until(() => server.received.some((command) => command.connection === 2), 'the reconnect handshake to begin');
    await cache.stop();
    await until(() => server.openConnections === 0, 'the connection to close');
    expect(server.commands('QUIT')).toEqual([]);
  });
});
