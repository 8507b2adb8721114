import { randomUUID } from 'node:crypto';
import { getEventListeners, once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as afterIo, setTimeout as sleep } from 'node:timers/promises';
import { AckPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, headers, nanos, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrUnavailable } from '../../domain/errors.ts';
import type { Logger } from '../../ports/logger.ts';
import type { OrderPlacedEnvelope } from '../../ports/order-events.ts';
import { sampleEnvelope } from '../../../test/contracts/order-events.contract.ts';
import { findBinary, startLocalServer, type LocalServer } from '../../../test/faults/local-servers.ts';
import { settlesBefore, until } from '../../../test/support/eventually.ts';
import { LogCapture, type LogLine } from '../../../test/support/log-capture.ts';
import { freePort } from '../../../test/support/ports.ts';
import { natsConfigFromEnv, type NatsConfig } from './config.ts';
import { jetstreamPublisher, NatsEventBus, type StreamPublisherFactory } from './event-bus.ts';

/**
 * The bus's own behaviour beyond the shared contract (test/contracts/nats-event-bus.real.test.ts): its
 * options reaching the broker, what it logs, acknowledgement and termination, drain, and its state through
 * an outage, a stall and a connection that closes for good, on private nats-servers (test/faults/local-servers.ts).
 */

const NATS_URL = process.env.NATS_URL;

const outcome = <T>(promise: Promise<T>): Promise<unknown> =>
  promise.then(
    () => 'resolved',
    (err: unknown) => err,
  );

function logged() {
  const capture = new LogCapture();
  return { capture, logger: pino({ level: 'debug' }, capture) };
}

/** A nats-server of our own; `args` is read at each start, so a restart can change its settings. */
async function privateNats(args: () => string[] = () => ['-js']): Promise<LocalServer & { readonly config: NatsConfig }> {
  const binary = findBinary('nats-server');
  if (binary === undefined) throw new Error('nats-server not found');
  const storeDir = mkdtempSync(join(tmpdir(), 'orders-nats-'));
  const server = await startLocalServer({
    name: 'nats-server',
    command: (p) => [binary, ['-a', '127.0.0.1', '-p', String(p), '-sd', storeDir, ...args()]],
    onStop: () => rmSync(storeDir, { recursive: true, force: true }),
  });
  const url = `nats://127.0.0.1:${server.port}`;
  return Object.assign(server, { config: { servers: [url], display: url } });
}

describe.skipIf(!NATS_URL)('NatsEventBus on the shared NATS_URL', () => {
  const runId = randomUUID().replaceAll('-', '').slice(0, 12);
  let counter = 0;
  let config: NatsConfig;
  let raw: NatsConnection;
  let jsm: JetStreamManager;

  /** A bus on a subject and stream of its own. */
  const names = () => {
    counter += 1;
    return { subject: `test.bus.${runId}.${counter}`, stream: `B_${runId}_${counter}`, durable: 'orders-notifier' };
  };

  beforeAll(async () => {
    config = natsConfigFromEnv(process.env);
    raw = await connect({ servers: [...config.servers] });
    jsm = await jetstreamManager(raw);
  });

  afterAll(async () => {
    await raw?.close();
  });

  it('[EVT-6-subject-payload] the configured limits reach the stream and the consumer; the acknowledging publisher gets the publish bound', async () => {
    const { capture, logger } = logged();
    const made: number[] = [];
    let closes = 0;
    const streamPublisher: StreamPublisherFactory = (nc, js, timeoutMs) => {
      made.push(timeoutMs);
      const inner = jetstreamPublisher(nc, js, timeoutMs);
      return { publish: inner.publish, close: () => void (closes += 1) };
    };
    const settings = names();
    const bus = new NatsEventBus(config, logger, {
      ...settings,
      duplicateWindowMs: 5_000,
      maxAgeMs: 60_000,
      ackWaitMs: 7_000,
      publishTimeoutMs: 1_500,
      deleteStreamOnStop: true,
      streamPublisher,
    });
    expect(bus.connected()).toBe(false);
    await bus.init();
    expect(bus.connected()).toBe(true);
    await expect(bus.health()).resolves.toBeUndefined();
    await expect(bus.init()).rejects.toThrow('publisher: init called twice');
    const stream = await jsm.streams.info(settings.stream);
    expect(stream.config.duplicate_window).toBe(nanos(5_000));
    expect(stream.config.max_age).toBe(nanos(60_000));
    expect((await jsm.consumers.info(settings.stream, settings.durable)).config.ack_wait).toBe(nanos(7_000));
    expect(made).toEqual([1_500]);

    await bus.stop();
    // Stopped: closed for good, said so without an error line (stopping is not a failure), the stream deleted as asked.
    expect(closes).toBe(1);
    expect(bus.connected()).toBe(false);
    await expect(bus.health()).rejects.toThrow(new ErrUnavailable('publisher: connection closed'));
    await expect(bus.publishOrderPlaced(sampleEnvelope())).rejects.toThrow(
      new ErrUnavailable('publisher: publish: not connected to the broker'),
    );
    await expect(jsm.streams.info(settings.stream)).rejects.toThrow(/stream not found/);
    await bus.stop();
    expect(closes).toBe(1);
    expect(capture.lines).toEqual([]);
  });

  it('keeps the stream at stop unless told to delete it; a failed publish keeps its cause', async () => {
    const settings = names();
    const bus = new NatsEventBus(config, pino({ enabled: false }), settings);
    await bus.init();
    await bus.stop();
    try {
      expect((await jsm.streams.info(settings.stream)).config.subjects).toEqual([settings.subject]);
      // Publishing to a stream that is gone: the broker's refusal, kept as the cause.
      const orphan = new NatsEventBus(config, pino({ enabled: false }), settings);
      await orphan.init();
      await jsm.streams.delete(settings.stream);
      const failure = await outcome(orphan.publishOrderPlaced(sampleEnvelope()));
      await orphan.stop();
      expect(failure).toBeInstanceOf(ErrUnavailable);
      expect((failure as Error).cause).toBeInstanceOf(Error);
    } finally {
      await jsm.streams.delete(settings.stream).catch(() => undefined);
    }
  });

  it('[HEALTH-ok] a health check that answered leaves no timer behind (the request timer of the probe is cleared)', async () => {
    const settings = names();
    // No client ping falls inside the check: its timer would count.
    const bus = new NatsEventBus(config, pino({ enabled: false }), { ...settings, pingIntervalMs: 600_000, deleteStreamOnStop: true });
    await bus.init();
    try {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const before = vi.getTimerCount();
      await expect(bus.health()).resolves.toBeUndefined();
      // The client's request timer was set and cleared.
      expect(vi.getTimerCount()).toBe(before);
    } finally {
      vi.useRealTimers();
      await bus.stop();
    }
  });

  describe('[EVT-7-delivery] acknowledgement', () => {
    let bus: NatsEventBus;
    let settings: ReturnType<typeof names>;
    const { capture, logger } = logged();
    const ackPending = async () => (await jsm.consumers.info(settings.stream, settings.durable)).num_ack_pending;

    beforeAll(async () => {
      settings = names();
      // ack_wait far beyond the test: anything settled here was settled by the bus, not by the broker's timer.
      bus = new NatsEventBus(config, logger, { ...settings, ackWaitMs: 60_000, deleteStreamOnStop: true });
      await bus.init();
    });

    afterAll(async () => {
      await bus?.stop();
    });

    it('an undecodable message (no JSON, no Nats-Msg-Id) is terminated with one warning and never handed over; the handler never gets an empty batch', async () => {
      const batches: Array<readonly OrderPlacedEnvelope[]> = [];
      const controller = new AbortController();
      const done = bus.consumeOrderPlaced((batch) => void batches.push(batch), controller.signal);
      const valid = JSON.stringify(sampleEnvelope().event);
      raw.publish(settings.subject, 'not json', { headers: withId(randomUUID()) });
      raw.publish(settings.subject, valid); // no headers at all
      raw.publish(settings.subject, valid, { headers: headers() }); // headers, no id
      // In the stream before the good one (sequences 1–3): the bus publishes on a connection of its own.
      await raw.flush();
      const dropped = (): LogLine[] => capture.find('events: undecodable order-placed message dropped');
      // Delivery is at least once: on a busy machine a message can come back before its termination is
      // processed, and is then dropped (and logged) again. Each of the three is dropped, none handed over,
      // and a batch of dropped messages alone calls no handler (awaited before the good one is published,
      // so no batch can mix them).
      await until(() => new Set(dropped().map((line) => line.seq)).size === 3, 'the three drops');
      expect(batches).toEqual([]);
      const good = sampleEnvelope({ item: 'ok' });
      await bus.publishOrderPlaced(good);
      await until(() => batches.flat().some((e) => e.id === good.id), 'the good message');
      await until(async () => (await ackPending()) === 0, 'every delivery settled');
      controller.abort();
      await done;
      expect(batches.flat()).toEqual([good]);
      expect(batches.every((batch) => batch.length > 0)).toBe(true);
      const seen = new Map(dropped().map((line) => [line.seq, [line.component, line.subject, line.seq]]));
      expect([...seen.values()].sort((a, b) => Number(a[2]) - Number(b[2]))).toEqual([
        ['publisher', settings.subject, 1],
        ['publisher', settings.subject, 2],
        ['publisher', settings.subject, 3],
      ]);
      expect(capture.find('events: consumer interrupted; resuming')).toEqual([]);
    });

    it('a message whose header block the client cannot parse (a header name with a space) is dropped and terminated like any undecodable one; the rest of its batch is handled', async () => {
      capture.lines.length = 0;
      const batches: Array<readonly OrderPlacedEnvelope[]> = [];
      const controller = new AbortController();
      const done = bus.consumeOrderPlaced((batch) => void batches.push(batch), controller.signal);
      const before = sampleEnvelope({ item: 'before' });
      const after = sampleEnvelope({ item: 'after' });
      await bus.publishOrderPlaced(before);
      // A valid event and id, and one header line nats.js refuses to read (it throws on the name's space).
      await publishRaw(
        settings.subject,
        `NATS/1.0\r\nNats-Msg-Id: ${randomUUID()}\r\nBad Name: x\r\n\r\n`,
        JSON.stringify(sampleEnvelope({ item: 'bad header' }).event),
      );
      await bus.publishOrderPlaced(after);
      await until(() => capture.find('events: undecodable order-placed message dropped').length > 0, 'the drop');
      await until(() => batches.flat().some((e) => e.id === after.id), 'the event after it');
      // Terminated: nothing left waiting for an acknowledgement (ack_wait is 60 s here).
      await until(async () => (await ackPending()) === 0, 'every delivery settled');
      controller.abort();
      await done;
      expect(batches.flat().map((e) => e.event.item)).toEqual(['before', 'after']);
      expect(capture.find('events: undecodable order-placed message dropped').map((l) => [l.component, l.subject])).toEqual([
        ['publisher', settings.subject],
      ]);
      expect(capture.find('events: consumer interrupted; resuming')).toEqual([]);
    });

    it('a failed handler is logged and its batch comes back after the nak delay (not ack_wait); a handled batch is acknowledged', async () => {
      capture.lines.length = 0;
      const failing = sampleEnvelope({ item: 'fails once' });
      let calls = 0;
      const handled: string[] = [];
      const controller = new AbortController();
      const done = bus.consumeOrderPlaced((batch) => {
        calls += 1;
        if (calls === 1) throw new Error('handler exploded');
        handled.push(...batch.map((e) => e.id));
      }, controller.signal);
      await bus.publishOrderPlaced(failing);
      await until(() => handled.includes(failing.id), 'the redelivery', 10_000);
      await until(async () => (await ackPending()) === 0, 'the acknowledgement');
      controller.abort();
      await done;
      const failed = capture.find('events: handler failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ err: 'handler exploded', events: 1, order_id: failing.event.order_id, event_id: failing.id });
    });
  });

  describe('drain', () => {
    it('returns as soon as nothing is pending (one pull of exactly what is pending), without a warning', async () => {
      const { capture, logger } = logged();
      const settings = names();
      const bus = new NatsEventBus(config, logger, { ...settings, deleteStreamOnStop: true });
      await bus.init();
      try {
        const envelopes = [sampleEnvelope(), sampleEnvelope(), sampleEnvelope()];
        for (const envelope of envelopes) await bus.publishOrderPlaced(envelope);
        const received: OrderPlacedEnvelope[] = [];
        // A pull asking for more than is pending would wait out its 1 s expiry.
        expect(
          await settlesBefore(
            bus.drainOrderPlaced((batch) => void received.push(...batch), 5_000),
            900,
          ),
        ).toBe(true);
        expect(received).toEqual(envelopes);
        expect(capture.lines).toEqual([]);
      } finally {
        await bus.stop();
      }
    });

    it('a drain that cannot reach the consumer is cut short with a warning', async () => {
      const { capture, logger } = logged();
      const settings = names();
      const bus = new NatsEventBus(config, logger, { ...settings, deleteStreamOnStop: true });
      await bus.init();
      try {
        await jsm.consumers.delete(settings.stream, settings.durable);
        await bus.drainOrderPlaced(() => undefined, 2_000);
        expect(capture.lines.map((line) => [line.msg, line.component, typeof line.error])).toEqual([
          ['events: drain cut short; the rest is redelivered to the next consumer', 'publisher', 'string'],
        ]);
      } finally {
        await bus.stop();
      }
    });
  });

  describe('consume', () => {
    it('a missing consumer: one warning, retries without piling up abort listeners, resumes once it exists', async () => {
      const { capture, logger } = logged();
      const settings = names();
      const bus = new NatsEventBus(config, logger, { ...settings, deleteStreamOnStop: true });
      await bus.init();
      try {
        await jsm.consumers.delete(settings.stream, settings.durable);
        const received: string[] = [];
        const controller = new AbortController();
        const done = bus.consumeOrderPlaced((batch) => void received.push(...batch.map((e) => e.id)), controller.signal);
        await until(() => capture.find('events: consumer interrupted; resuming').length > 0, 'the warning');
        await sleep(800); // a few retries (250 ms apart)
        expect(capture.find('events: consumer interrupted; resuming')).toHaveLength(1);
        expect(capture.lines[0]).toMatchObject({ component: 'publisher', level: 40 });
        // Ours for the current attempt and the retry pause's own; not one more per retry.
        expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(2);
        await jsm.consumers.add(settings.stream, {
          durable_name: settings.durable,
          ack_policy: AckPolicy.Explicit,
          filter_subject: settings.subject,
        });
        const envelope = sampleEnvelope();
        await bus.publishOrderPlaced(envelope);
        await until(() => received.includes(envelope.id), 'the event after the consumer came back');
        controller.abort();
        await expect(done).resolves.toBeUndefined();
      } finally {
        await bus.stop();
      }
    });

    it('[EVT-7-delivery] its pulls ask for a batch of 64 (the bound of a batch) that the server expires after 5 s', async () => {
      const settings = names();
      const bus = new NatsEventBus(config, pino({ enabled: false }), { ...settings, deleteStreamOnStop: true });
      await bus.init();
      const controller = new AbortController();
      let done: Promise<void> | undefined;
      try {
        const pulls = raw.subscribe(`$JS.API.CONSUMER.MSG.NEXT.${settings.stream}.${settings.durable}`, { max: 1 });
        await raw.flush();
        done = bus.consumeOrderPlaced(() => undefined, controller.signal);
        const first = await (async () => {
          for await (const pull of pulls) return pull.json<{ batch: number; expires: number }>();
          throw new Error('no pull request seen');
        })();
        expect(first).toMatchObject({ batch: 64, expires: nanos(5_000) });
      } finally {
        controller.abort();
        await done;
        await bus.stop();
      }
    });

    it('[EVT-4-notifier-stop] a signal already aborted: returns without asking the broker anything', async () => {
      const settings = names();
      const bus = new NatsEventBus(config, pino({ enabled: false }), { ...settings, deleteStreamOnStop: true });
      await bus.init();
      const controller = new AbortController();
      let running: Promise<void> | undefined;
      try {
        // Consumer look-ups (CONSUMER.INFO) of this stream's consumer, as the broker routes them.
        const asked: string[] = [];
        const lookups = raw.subscribe(`$JS.API.CONSUMER.INFO.${settings.stream}.${settings.durable}`, {
          callback: (_err, msg) => void asked.push(msg.subject),
        });
        await raw.flush();
        await expect(bus.consumeOrderPlaced(() => undefined, AbortSignal.abort())).resolves.toBeUndefined();
        // A look-up it had made would have been answered before it returned, so routed to us before this round trip.
        await raw.flush();
        expect(asked).toEqual([]);
        // The watch sees one: a consume with a live signal looks its consumer up first.
        running = bus.consumeOrderPlaced(() => undefined, controller.signal);
        await until(() => asked.length > 0, "the live consume's look-up");
        lookups.unsubscribe();
      } finally {
        controller.abort();
        await running;
        await bus.stop();
      }
    });

    it('[EVT-4-notifier-stop] aborted just as its retry pause begins: the pause ends with the abort, it does not run out', async () => {
      const settings = names();
      const controller = new AbortController();
      const warned = Promise.withResolvers<void>();
      // The interruption's warning is written just before the pause starts: the abort comes in between.
      const logger: Logger = {
        debug: () => undefined,
        info: () => undefined,
        error: () => undefined,
        warn: (_fields, msg) => {
          if (msg !== 'events: consumer interrupted; resuming') return;
          controller.abort();
          warned.resolve();
        },
      };
      const bus = new NatsEventBus(config, logger, { ...settings, deleteStreamOnStop: true });
      await bus.init();
      try {
        await jsm.consumers.delete(settings.stream, settings.durable);
        const done = bus.consumeOrderPlaced(() => undefined, controller.signal);
        await warned.promise;
        // Returned before the event loop's next turn: a pause deaf to the abort would still run 250 ms.
        expect(await Promise.race([done.then(() => 'returned'), afterIo('still pausing')])).toBe('returned');
      } finally {
        await bus.stop();
      }
    });

    it('aborted while it looks the consumer up: resolves at once', async () => {
      const settings = names();
      const bus = new NatsEventBus(config, pino({ enabled: false }), { ...settings, deleteStreamOnStop: true });
      await bus.init();
      try {
        for (let i = 0; i < 5; i++) {
          const controller = new AbortController();
          const done = bus.consumeOrderPlaced(() => undefined, controller.signal);
          await Promise.resolve();
          controller.abort();
          expect(await Promise.race([done.then(() => 'resolved'), sleep(2_000).then(() => 'still running')])).toBe('resolved');
        }
      } finally {
        await bus.stop();
      }
    });

    it('what already arrived is handed over together, at most 64 at a time, and each event once (EVT-7-delivery)', async () => {
      const settings = names();
      const bus = new NatsEventBus(config, pino({ enabled: false }), { ...settings, deleteStreamOnStop: true });
      await bus.init();
      try {
        const envelopes = Array.from({ length: 150 }, () => sampleEnvelope());
        await Promise.all(envelopes.map((e) => bus.publishOrderPlaced(e)));
        const sizes: number[] = [];
        const controller = new AbortController();
        const ids: string[] = [];
        const done = bus.consumeOrderPlaced((batch) => {
          sizes.push(batch.length);
          ids.push(...batch.map((e) => e.id));
        }, controller.signal);
        await until(() => new Set(ids).size === envelopes.length, 'every event');
        controller.abort();
        await done;
        // How many a pull finds depends on the machine's pace; never more than 64 (the pull's bound), and
        // what had already arrived comes in batches, not one by one.
        expect(Math.max(...sizes)).toBeGreaterThan(1);
        // A batch that waits for more than has arrived outlives the ack wait: its events come twice.
        expect(ids, `batches of ${sizes.join(', ')}`).toHaveLength(envelopes.length);
        expect(Math.max(...sizes)).toBeLessThanOrEqual(64);
      } finally {
        await bus.stop();
      }
    });

    /**
     * The bus's own pull requests, seen on a subscription of ours: the first one's reply subject is the inbox
     * its consumer's deliveries go to. A pull request of ours with that reply subject is delivered there too,
     * as a second pull still open on the server after a reconnect's fresh one would be. The client's own pulls
     * never have more than 64 messages waiting (a refill is sent only when the iterator reaches it), so this is
     * how more than a batch arrives at once, and how the server's refusal of a pull reaches the bus.
     */
    async function watchPulls(settings: ReturnType<typeof names>) {
      const nextSubject = `$JS.API.CONSUMER.MSG.NEXT.${settings.stream}.${settings.durable}`;
      const pulls = raw.subscribe(nextSubject, { max: 1 });
      await raw.flush();
      const inbox = (async () => {
        for await (const pull of pulls) return pull.reply!;
        throw new Error('no pull request seen');
      })();
      return {
        inbox,
        /** A pull request of ours, answered to the bus's inbox. */
        pull: async (body: string) => raw.publish(nextSubject, body, { reply: await inbox }),
      };
    }

    /** A handler whose nth call (from 1) waits until `release(n)`. */
    function heldHandler(held: readonly number[]) {
      const batches: Array<readonly OrderPlacedEnvelope[]> = [];
      const gates = new Map(held.map((n) => [n, Promise.withResolvers<void>()]));
      const handler = async (batch: readonly OrderPlacedEnvelope[]): Promise<void> => {
        batches.push(batch);
        await gates.get(batches.length)?.promise;
      };
      return { batches, handler, release: (n: number) => gates.get(n)!.resolve() };
    }

    const ackPendingOf = async (settings: ReturnType<typeof names>) =>
      (await jsm.consumers.info(settings.stream, settings.durable)).num_ack_pending;
    /** Delivered by the server; a moment more for the bus's connection, in this process, to read them. */
    const deliveredToBus = async (settings: ReturnType<typeof names>, count: number) => {
      await until(async () => (await ackPendingOf(settings)) === count, `${count} deliveries`);
      await sleep(200);
    };

    it('[EVT-7-delivery] more than 64 already arrived (a second pull open for the same inbox): still handed over at most 64 at a time', async () => {
      const settings = names();
      // ack_wait far beyond the test: nothing comes back while a batch is held.
      const bus = new NatsEventBus(config, pino({ enabled: false }), { ...settings, ackWaitMs: 60_000, deleteStreamOnStop: true });
      await bus.init();
      const controller = new AbortController();
      let done: Promise<void> | undefined;
      try {
        const pulls = await watchPulls(settings);
        const { batches, handler, release } = heldHandler([1]);
        const envelopes = [sampleEnvelope()];
        await bus.publishOrderPlaced(envelopes[0]!);
        done = bus.consumeOrderPlaced(handler, controller.signal);
        await until(() => batches.length === 1, 'the first batch');
        // The bus's pull has 63 left; a second one of 64 makes 127 arrive while the first batch is held.
        await pulls.pull(JSON.stringify({ batch: 64, expires: nanos(30_000) }));
        const more = Array.from({ length: 127 }, () => sampleEnvelope());
        await Promise.all(more.map((e) => bus.publishOrderPlaced(e)));
        envelopes.push(...more);
        await deliveredToBus(settings, 128);
        release(1);
        await until(() => batches.flat().length >= envelopes.length, 'every event');
        const sizes = batches.map((batch) => batch.length);
        expect(sizes[0]).toBe(1);
        // 127 were there: a full batch, not one more.
        expect(sizes[1], `batches of ${sizes.join(', ')}`).toBe(64);
        expect(Math.max(...sizes)).toBeLessThanOrEqual(64);
        expect(new Set(batches.flat().map((e) => e.id))).toEqual(new Set(envelopes.map((e) => e.id)));
        expect(batches.flat()).toHaveLength(envelopes.length);
      } finally {
        controller.abort();
        await done;
        await bus.stop();
      }
    });

    it('a pull the server refuses (400) while a full batch is handled: the failure is taken up after the batch, not left unhandled, and the consumer resumes', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      const { capture, logger } = logged();
      const settings = names();
      const bus = new NatsEventBus(config, logger, { ...settings, ackWaitMs: 60_000, deleteStreamOnStop: true });
      await bus.init();
      const controller = new AbortController();
      let done: Promise<void> | undefined;
      try {
        const pulls = await watchPulls(settings);
        const { batches, handler, release } = heldHandler([1, 2]);
        const envelopes = [sampleEnvelope()];
        await bus.publishOrderPlaced(envelopes[0]!);
        done = bus.consumeOrderPlaced(handler, controller.signal);
        await until(() => batches.length === 1, 'the first batch');
        // 63 left on the bus's pull and one on ours: exactly a full batch arrives while the first is held.
        await pulls.pull(JSON.stringify({ batch: 1, expires: nanos(30_000) }));
        const more = Array.from({ length: 64 }, () => sampleEnvelope());
        await Promise.all(more.map((e) => bus.publishOrderPlaced(e)));
        envelopes.push(...more);
        await deliveredToBus(settings, 65);
        release(1);
        await until(() => batches.length === 2, 'the second batch');
        // Full: the next message was asked for before the batch went to the handler, and nothing else awaits it.
        expect(batches[1]).toHaveLength(64);
        // A malformed pull request to the bus's inbox: the server answers it 400, which ends the bus's messages
        // with that error, the next message it had asked for rejected while the handler still runs.
        const answers = raw.subscribe(await pulls.inbox);
        const refused = (async () => {
          for await (const answer of answers) if (answer.headers?.code === 400) return answer.headers.description;
          return undefined;
        })();
        await pulls.pull('{not json');
        expect(await refused).toMatch(/^Bad Request/);
        answers.unsubscribe();
        await sleep(200); // the same answer reaches the bus's connection
        release(2);
        await until(() => capture.find('events: consumer interrupted; resuming').length > 0, 'the resume');
        expect(capture.find('events: consumer interrupted; resuming').map((line) => line.error)).toEqual([
          expect.stringMatching(/^bad request/i),
        ]);
        expect(unhandled).toEqual([]);
        expect(batches.flat().map((e) => e.id)).toEqual(envelopes.map((e) => e.id));
        await until(async () => (await ackPendingOf(settings)) === 0, 'every delivery acknowledged');
      } finally {
        process.off('unhandledRejection', onUnhandled);
        controller.abort();
        await done;
        await bus.stop();
      }
    });

    it('[EVT-7-delivery] aborted while a batch is held: what had already arrived is handed over (the end is seen inside the next batch) before the consumer returns', async () => {
      const settings = names();
      const bus = new NatsEventBus(config, pino({ enabled: false }), { ...settings, ackWaitMs: 60_000, deleteStreamOnStop: true });
      await bus.init();
      const controller = new AbortController();
      try {
        const { batches, handler, release } = heldHandler([1]);
        const envelopes = [sampleEnvelope()];
        await bus.publishOrderPlaced(envelopes[0]!);
        const done = bus.consumeOrderPlaced(handler, controller.signal);
        await until(() => batches.length === 1, 'the first batch');
        const more = Array.from({ length: 10 }, () => sampleEnvelope());
        for (const envelope of more) await bus.publishOrderPlaced(envelope);
        envelopes.push(...more);
        await deliveredToBus(settings, 11);
        // The abort closes the bus's messages: their end is queued behind the ten that arrived.
        controller.abort();
        release(1);
        await done;
        expect(batches.map((batch) => batch.map((e) => e.id))).toEqual([[envelopes[0]!.id], more.map((e) => e.id)]);
        await until(async () => (await ackPendingOf(settings)) === 0, 'every delivery acknowledged');
      } finally {
        controller.abort();
        await bus.stop();
      }
    });
  });
});

/** One message published over a bare protocol connection: headers exactly as given, as no client would write them. */
async function publishRaw(subject: string, headerBlock: string, payload: string): Promise<void> {
  const url = new URL(natsConfigFromEnv(process.env).servers[0]!);
  const socket = createConnection({ host: url.hostname, port: Number(url.port) });
  try {
    await once(socket, 'connect');
    const headerBytes = Buffer.byteLength(headerBlock);
    const total = headerBytes + Buffer.byteLength(payload);
    socket.write(
      `CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\nHPUB ${subject} ${headerBytes} ${total}\r\n${headerBlock}${payload}\r\nPING\r\n`,
    );
    // The server's PONG: the message was processed (stored, for a subject a stream captures).
    let seen = '';
    while (!seen.includes('PONG')) {
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      seen += chunk.toString('latin1');
      if (seen.includes('-ERR')) throw new Error(`the server refused the raw publish: ${seen}`);
    }
  } finally {
    socket.destroy();
  }
}

function withId(id: string) {
  const h = headers();
  h.set('Nats-Msg-Id', id);
  return h;
}

describe.skipIf(!NATS_URL || findBinary('nats-server') === undefined)('NatsEventBus on a private nats-server', () => {
  it('[EVT-6-subject-payload] without options: stream ORDERS (7 days, 10-minute duplicate window), consumer orders-notifier (4 s ack wait), client name orders', async () => {
    const monitor = await freePort();
    const server = await privateNats(() => ['-js', '-m', String(monitor)]);
    const bus = new NatsEventBus(server.config, pino({ enabled: false }));
    try {
      await bus.init();
      const nc = await connect({ servers: [...server.config.servers] });
      const jsm = await jetstreamManager(nc);
      const stream = await jsm.streams.info('ORDERS');
      expect(stream.config.subjects).toEqual(['orders.placed']);
      expect(stream.config.max_age).toBe(nanos(7 * 24 * 60 * 60_000));
      expect(stream.config.duplicate_window).toBe(nanos(10 * 60_000));
      expect((await jsm.consumers.info('ORDERS', 'orders-notifier')).config.ack_wait).toBe(nanos(4_000));
      await nc.close();
      const connz = (await (await fetch(`http://127.0.0.1:${monitor}/connz`)).json()) as { connections: Array<{ name?: string }> };
      expect(connz.connections.map((c) => c.name)).toEqual(['orders']);
      await bus.stop();
      // Not asked to delete: the stream outlives the bus.
      const again = await connect({ servers: [...server.config.servers] });
      expect((await (await jetstreamManager(again)).streams.info('ORDERS')).config.name).toBe('ORDERS');
      await again.close();
    } finally {
      await bus.stop();
      await server.stop();
    }
  });

  it('an outage: rejects at once and reports it, logs once, reconnects however long it lasts, then a stop while down closes at once', async () => {
    const server = await privateNats();
    const { capture, logger } = logged();
    const bus = new NatsEventBus(server.config, logger, { subject: `outage.${randomUUID()}`, drainTimeoutMs: 5_000 });
    try {
      await bus.init();
      await server.kill();
      await until(() => !bus.connected(), 'the disconnect');
      const health = await outcome(bus.health());
      expect(health).toEqual(new ErrUnavailable('publisher: disconnected from the broker; reconnecting'));
      const publishedAndDrained = (async () => {
        expect(await outcome(bus.publishOrderPlaced(sampleEnvelope()))).toEqual(
          new ErrUnavailable('publisher: publish: not connected to the broker'),
        );
        await bus.drainOrderPlaced(() => undefined, 2_000);
      })();
      // At once: not after the drain's 2 s.
      expect(await settlesBefore(publishedAndDrained, 1_500)).toBe(true);
      await publishedAndDrained;
      await sleep(1_200); // several reconnect attempts fail
      expect(capture.lines.map((l) => [l.msg, l.component, l.reason, l.servers])).toEqual([
        ['publisher: connection lost; reconnecting in the background', 'publisher', 'disconnect', server.config.display],
      ]);

      await server.start();
      await until(
        () =>
          bus.health().then(
            () => true,
            () => false,
          ),
        'health after the restart',
      );
      expect(bus.connected()).toBe(true);
      expect(capture.lines.slice(1).map((l) => [l.msg, l.component, l.servers])).toEqual([
        ['publisher: connection restored', 'publisher', server.config.display],
      ]);

      await server.kill();
      await until(() => !bus.connected(), 'the second disconnect');
      // Nothing to drain while disconnected: closed at once, not after drainTimeoutMs.
      expect(await settlesBefore(bus.stop(), 1_500)).toBe(true);
      expect(await outcome(bus.health())).toEqual(new ErrUnavailable('publisher: connection closed'));
    } finally {
      await bus.stop();
      await server.stop();
    }
  });

  it('[LIFE-4-shutdown] a stop while the broker is away closes at once: it does not drain, which waits for a reconnect attempt to end', async () => {
    const server = await privateNats();
    const bus = new NatsEventBus(server.config, pino({ enabled: false }), {
      subject: `away.${randomUUID()}`,
      connectTimeoutMs: 10_000,
      drainTimeoutMs: 10_000,
    });
    // In the broker's place once it is gone: accepts the client's reconnect attempts and never answers, so an
    // attempt lasts connectTimeoutMs; a drain's flush would wait for it (or for drainTimeoutMs).
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    try {
      await bus.init();
      await server.kill();
      silent.listen(server.port, '127.0.0.1');
      await once(silent, 'listening');
      await until(() => !bus.connected(), 'the disconnect');
      await until(() => sockets.length > 0, 'a reconnect attempt in progress');
      expect(await settlesBefore(bus.stop(), 1_500)).toBe(true);
      expect(await outcome(bus.health())).toEqual(new ErrUnavailable('publisher: connection closed'));
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await bus.stop();
      await server.stop();
    }
  });

  it('[LIFE-4-shutdown] a stalled broker: health and publish fail within their bounds, a stop drains and gives up after drainTimeoutMs', async () => {
    const server = await privateNats();
    const bus = new NatsEventBus(server.config, pino({ enabled: false }), {
      subject: `stall.${randomUUID()}`,
      healthTimeoutMs: 300,
      publishTimeoutMs: 300,
      drainTimeoutMs: 300,
      pingIntervalMs: 5_000,
    });
    try {
      await bus.init();
      server.pause();
      await sleep(50);
      const healthAnswer = outcome(bus.health());
      expect(await settlesBefore(healthAnswer, 1_500)).toBe(true);
      const health = await healthAnswer;
      expect(health).toBeInstanceOf(ErrUnavailable);
      expect((health as Error).message).toMatch(/^publisher: broker did not answer a JetStream request within 300 ms: /);
      const published = outcome(bus.publishOrderPlaced(sampleEnvelope()));
      expect(await settlesBefore(published, 1_500)).toBe(true);
      expect(await published).toBeInstanceOf(ErrUnavailable);
      // Still connected (no ping missed yet): the stop drains, which waits for the paused broker to confirm,
      // so it is not over before a 100 ms timer set after its own 300 ms one (a close would be), and gives up
      // at drainTimeoutMs, before a 1.5 s one.
      expect(bus.connected()).toBe(true);
      const stopped = bus.stop();
      expect(await settlesBefore(stopped, 100)).toBe(false);
      expect(await settlesBefore(stopped, 1_400)).toBe(true);
    } finally {
      server.resume();
      await bus.stop();
      await server.stop();
    }
  });

  it('a stalled broker is declared stale after two missed pings and reported once', async () => {
    const server = await privateNats();
    const { capture, logger } = logged();
    const bus = new NatsEventBus(server.config, logger, { subject: `stale.${randomUUID()}`, pingIntervalMs: 200 });
    try {
      await bus.init();
      server.pause();
      await until(() => !bus.connected(), 'the stale connection', 2_000);
      await sleep(500);
      expect(capture.find('publisher: connection lost; reconnecting in the background').map((l) => l.reason)).toEqual(['staleConnection']);
    } finally {
      server.resume();
      await bus.stop();
      await server.stop();
    }
  });

  it('no JetStream answer at start-up: init fails within connectTimeoutMs naming the stream, and the connection is closed', async () => {
    const server = await privateNats(() => []);
    // Someone listens on the JetStream API but never answers (a server without JetStream would refuse at once).
    const listener = await connect({ servers: [...server.config.servers] });
    listener.subscribe('$JS.API.>');
    await listener.flush();
    const bus = new NatsEventBus(server.config, pino({ enabled: false }), { stream: 'NOJS', connectTimeoutMs: 300 });
    try {
      const initAnswer = outcome(bus.init());
      expect(await settlesBefore(initAnswer, 2_000)).toBe(true);
      const failure = await initAnswer;
      expect(failure).toBeInstanceOf(ErrUnavailable);
      expect((failure as Error).message).toMatch(/^publisher: JetStream stream NOJS unavailable: /);
      expect((failure as Error).cause).toBeInstanceOf(Error);
      expect(await outcome(bus.health())).toEqual(new ErrUnavailable('publisher: not connected'));
    } finally {
      await bus.stop();
      await listener.close();
      await server.stop();
    }
  });

  it('a connection that closes for good (the restarted broker refuses it): logged, health fails, consume rejects', async () => {
    let auth: string[] = [];
    const server = await privateNats(() => ['-js', ...auth]);
    const { capture, logger } = logged();
    const bus = new NatsEventBus(server.config, logger, { subject: `closed.${randomUUID()}` });
    try {
      await bus.init();
      const controller = new AbortController();
      const consuming = outcome(bus.consumeOrderPlaced(() => undefined, controller.signal));
      await sleep(200);
      auth = ['--user', 'someone', '--pass', 'else'];
      await server.kill();
      await server.start();
      const failure = await consuming;
      expect(failure).toEqual(new ErrUnavailable('publisher: consume: connection closed'));
      expect(((failure as Error).cause as Error).message).toBe('consumer ended');
      await until(() => capture.find('publisher: connection closed').length > 0, 'the error line');
      expect(bus.connected()).toBe(false);
      expect(capture.find('publisher: connection closed').map((l) => [l.component, l.level, typeof l.error])).toEqual([
        ['publisher', 50, 'string'],
      ]);
      // The broker's refusal of the reconnect (Authorization Violation): a warning naming the component and the error.
      const reported = capture.find('publisher: broker reported an error');
      expect(reported).not.toEqual([]);
      expect(reported.map((l) => [l.component, l.level, typeof l.error])).toEqual(reported.map(() => ['publisher', 40, 'string']));
      expect(await outcome(bus.health())).toEqual(new ErrUnavailable('publisher: connection closed'));
      const lines = capture.lines.length;
      await bus.drainOrderPlaced(() => undefined, 1_000);
      expect(capture.lines).toHaveLength(lines);
      await bus.stop();
    } finally {
      await bus.stop();
      await server.stop();
    }
  });
});

describe.skipIf(!NATS_URL || findBinary('nats-server') === undefined)('NATS_URL credentials, on a private nats-server', () => {
  // nats.js does not read a URL's user-info: before the config handed it over, a broker asking for a
  // password refused a NATS_URL that carried it (spec 8.1, NATS_URL a URL).
  it.each([
    ['a user and password', ['--user', 'orders', '--pass', 'p@ss:w0rd'], 'orders:p%40ss%3Aw0rd'],
    ['a token', ['--auth', 's3cret-token'], 's3cret-token'],
  ])('[CONFIG-formats] connects with %s from NATS_URL, and a wrong one fails without echoing it', async (_, auth, userInfo) => {
    const server = await privateNats(() => ['-js', ...auth]);
    const good = new NatsEventBus(
      natsConfigFromEnv({ NATS_URL: `nats://${userInfo}@127.0.0.1:${server.port}` }),
      pino({ enabled: false }),
      {
        subject: `auth.${randomUUID()}`,
        deleteStreamOnStop: true,
      },
    );
    const wrong = new NatsEventBus(
      natsConfigFromEnv({ NATS_URL: `nats://intruder:guess-pw@127.0.0.1:${server.port}` }),
      pino({ enabled: false }),
    );
    try {
      await good.init();
      await good.publishOrderPlaced(sampleEnvelope());
      await expect(good.health()).resolves.toBeUndefined();
      const refused = await outcome(wrong.init());
      expect(refused).toBeInstanceOf(ErrUnavailable);
      expect((refused as Error).message).toMatch(
        /^publisher: cannot connect to NATS_URL \(nats:\/\/127\.0\.0\.1:\d+\): .*[Aa]uthorization/,
      );
      expect((refused as Error).message).not.toMatch(/guess-pw|intruder/);
    } finally {
      await wrong.stop();
      await good.stop();
      await server.stop();
    }
  });
});
