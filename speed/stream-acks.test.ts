import { headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it, vi } from 'vitest';
import { sharedReplyPublisher, StreamAcks } from './stream-acks.ts';

/** NATS subject matching: `*` stands for one token, `>` for one or more at the end. */
function matches(pattern: string, subject: string): boolean {
  const want = pattern.split('.');
  const got = subject.split('.');
  for (const [i, token] of want.entries()) {
    if (token === '>') return got.length > i;
    if (i >= got.length || (token !== '*' && token !== got[i])) return false;
  }
  return want.length === got.length;
}

/**
 * A connection that records publishes; `answer` delivers a reply to every subscription whose subject
 * matches it, as the server does. `fail` makes the next publish throw (a closed connection does).
 */
function fakeConnection() {
  const subscriptions: Array<{ subject: string; deliver: (error: Error | null, msg: Msg) => void }> = [];
  const published: Array<{ subject: string; payload: string; reply: string; msgId: string | undefined }> = [];
  let failure: unknown;
  const nc = {
    subscribe: (subject: string, options: { callback: (error: Error | null, msg: Msg) => void }) => {
      subscriptions.push({ subject, deliver: options.callback });
    },
    publish: (subject: string, payload: string, options: { reply: string; headers: ReturnType<typeof headers> }) => {
      if (failure !== undefined) {
        const thrown = failure;
        failure = undefined;
        throw thrown;
      }
      published.push({ subject, payload, reply: options.reply, msgId: options.headers.get('Nats-Msg-Id') });
    },
  } as unknown as NatsConnection;
  const answer = (reply: string, body: string, status?: { code: number; description: string } | 'ok'): void => {
    for (const sub of subscriptions.filter(({ subject }) => matches(subject, reply))) {
      sub.deliver(null, {
        subject: reply,
        string: () => body,
        headers: status === undefined ? undefined : status === 'ok' ? headers() : headers(status.code, status.description),
      } as unknown as Msg);
    }
  };
  const fail = (error: unknown): void => {
    failure = error;
  };
  return { nc, published, answer, fail };
}

/** How a publish settled: 'resolved', its rejection's message, or 'pending'. */
async function outcome(promise: Promise<void>): Promise<string> {
  let settled = 'pending';
  promise.then(
    () => (settled = 'resolved'),
    (error: unknown) => (settled = error instanceof Error ? error.message : `not an Error: ${String(error)}`),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return settled;
}

describe('StreamAcks', () => {
  it('publishes with a reply subject and the Nats-Msg-Id header; a PubAck resolves, duplicate or not', async () => {
    const { nc, published, answer } = fakeConnection();
    const acks = new StreamAcks(nc, 60_000);
    const first = acks.publish('orders.placed', '{"a":1}', 'id-1');
    const second = acks.publish('orders.placed', '{"a":2}', 'id-2');
    expect(published.map(({ subject, payload, msgId }) => ({ subject, payload, msgId }))).toEqual([
      { subject: 'orders.placed', payload: '{"a":1}', msgId: 'id-1' },
      { subject: 'orders.placed', payload: '{"a":2}', msgId: 'id-2' },
    ]);
    expect(published[0]?.reply).not.toBe(published[1]?.reply);
    answer(published[1]!.reply, '{"stream":"ORDERS","seq":2,"duplicate":true}');
    answer(published[0]!.reply, '{"stream":"ORDERS","seq":1}');
    await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
  });

  it("a stream error, a no-responders status or an unreadable reply rejects with the stream's words", async () => {
    const { nc, published, answer } = fakeConnection();
    const acks = new StreamAcks(nc, 60_000);
    const results = [acks.publish('s', 'x', '1'), acks.publish('s', 'x', '2'), acks.publish('s', 'x', '3')];
    answer(published[0]!.reply, '{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"}}');
    answer(published[1]!.reply, '', { code: 503, description: 'No Responders' });
    answer(published[2]!.reply, 'garbage');
    const reasons = (await Promise.allSettled(results)).map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'resolved'));
    expect(reasons).toEqual([
      'maximum messages exceeded',
      'stream unavailable (503 No Responders)',
      'unreadable acknowledgement from the stream',
    ]);
  });

  it('no answer within the timeout rejects; a late answer changes nothing; close fails what still waits', async () => {
    // The sweep's own clock, not the wall clock: under a full run's load a real 100 ms sweep once never came in 60 s.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    try {
      const { nc, published, answer } = fakeConnection();
      const acks = new StreamAcks(nc, 20);
      const late = acks.publish('s', 'x', 'late');
      vi.advanceTimersByTime(19);
      expect(await outcome(late)).toBe('pending');
      vi.advanceTimersByTime(100);
      expect(await outcome(late)).toBe('no acknowledgement from the stream within 20 ms');
      answer(published[0]!.reply, '{"stream":"ORDERS","seq":1}');
      const waiting = new StreamAcks(nc, 60_000).publish('s', 'x', 'open');
      const closing = new StreamAcks(nc, 60_000);
      const pending = closing.publish('s', 'x', 'pending');
      closing.close();
      await expect(pending).rejects.toThrow('connection closed');
      answer(published[1]!.reply, '{"stream":"ORDERS","seq":2}');
      await expect(waiting).resolves.toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
  it("[EVT-7-delivery] publishers sharing a connection never take each other's acknowledgements", async () => {
    const { nc, published, answer } = fakeConnection();
    const one = new StreamAcks(nc, 60_000);
    const two = new StreamAcks(nc, 60_000);
    const first = one.publish('s', 'x', 'a');
    const second = two.publish('s', 'x', 'b');
    answer(published[0]!.reply, '{"stream":"ORDERS","seq":1}');
    expect(await outcome(first)).toBe('resolved');
    expect(await outcome(second)).toBe('pending');
    answer(published[1]!.reply, '{"stream":"ORDERS","seq":2}');
    expect(await outcome(second)).toBe('resolved');
  });

  it('[EVT-7-delivery] a reply is a PubAck only with a stream name and a sequence; a JSON null or a status without error is read as such', async () => {
    const { nc, published, answer } = fakeConnection();
    const acks = sharedReplyPublisher(nc, undefined as never, 60_000);
    const bodies = [
      '{"stream":"ORDERS"}',
      '{"seq":1}',
      '{"stream":1,"seq":1}',
      '{"stream":"ORDERS","seq":"1"}',
      'null',
      '{"error":{"description":7}}',
    ];
    const results = bodies.map((_, i) => acks.publish('s', 'x', String(i)));
    bodies.forEach((body, i) => answer(published[i]!.reply, body));
    expect(await Promise.all(results.map(outcome))).toEqual(Array(bodies.length).fill('unexpected acknowledgement from the stream'));
    const withHeaders = acks.publish('s', 'x', 'h');
    answer(published[bodies.length]!.reply, '{"stream":"ORDERS","seq":9}', 'ok');
    expect(await outcome(withHeaders)).toBe('resolved');
  });

  it('[EVT-7-delivery] a publish the connection refuses rejects at once with its error, and nothing waits for it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    try {
      const { nc, published, answer, fail } = fakeConnection();
      const acks = new StreamAcks(nc, 1_000);
      const closed = new Error('CONNECTION_CLOSED');
      fail(closed);
      const refused = acks.publish('s', 'x', 'a');
      await expect(refused).rejects.toBe(closed);
      fail('not an error');
      await expect(acks.publish('s', 'x', 'b')).rejects.toThrow(new Error('not an error'));
      const open = acks.publish('s', 'x', 'c');
      vi.advanceTimersByTime(1_000);
      expect(await outcome(open)).toBe('no acknowledgement from the stream within 1000 ms');
      expect(vi.getTimerCount()).toBe(0);
      expect(published).toHaveLength(1);
      answer(published[0]!.reply, '{"stream":"ORDERS","seq":1}');
    } finally {
      vi.useRealTimers();
    }
  });

  it('[EVT-7-delivery] a settled publish leaves nothing waiting: the next sweep stops (answered, refused, closed)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    try {
      const { nc, published, answer, fail } = fakeConnection();
      const acks = new StreamAcks(nc, 60_000);
      const answered = acks.publish('s', 'x', 'a');
      answer(published[0]!.reply, '{"stream":"ORDERS","seq":1}');
      expect(await outcome(answered)).toBe('resolved');
      vi.advanceTimersByTime(100);
      expect(vi.getTimerCount()).toBe(0);

      fail(new Error('CONNECTION_CLOSED'));
      await expect(acks.publish('s', 'x', 'b')).rejects.toThrow('CONNECTION_CLOSED');
      vi.advanceTimersByTime(100);
      expect(vi.getTimerCount()).toBe(0);

      acks.publish('s', 'x', 'c').catch(() => undefined);
      acks.close();
      const after = acks.publish('s', 'x', 'd');
      answer(published[2]!.reply, '{"stream":"ORDERS","seq":2}');
      expect(await outcome(after)).toBe('resolved');
      vi.advanceTimersByTime(100);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('[EVT-7-delivery] a waiter fails at the first sweep past its deadline, not before; the sweep stops when none waits', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    try {
      const { nc, published, answer } = fakeConnection();
      const acks = new StreamAcks(nc, 250);
      const early = acks.publish('s', 'x', 'a');
      vi.advanceTimersByTime(200);
      const late = acks.publish('s', 'x', 'b');
      expect(await outcome(early)).toBe('pending');
      vi.advanceTimersByTime(100); // 300 ms: the first is past its deadline (250), the second (450) is not
      expect(await outcome(early)).toBe('no acknowledgement from the stream within 250 ms');
      expect(await outcome(late)).toBe('pending');
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(100);
      answer(published[1]!.reply, '{"stream":"ORDERS","seq":2}');
      expect(await outcome(late)).toBe('resolved');
      vi.advanceTimersByTime(100);
      expect(vi.getTimerCount()).toBe(0);
      // A deadline reached exactly at a sweep fails there.
      const exact = new StreamAcks(nc, 100).publish('s', 'x', 'c');
      vi.advanceTimersByTime(100);
      expect(await outcome(exact)).toBe('no acknowledgement from the stream within 100 ms');
      // close stops the sweep too.
      acks.publish('s', 'x', 'd').catch(() => undefined);
      expect(vi.getTimerCount()).toBe(1);
      acks.close();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
