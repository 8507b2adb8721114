import { headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { StreamAcks } from './stream-acks.ts';

/** A connection that records publishes; `answer` delivers a reply to the subscription (`<inbox>.*`) it matches. */
function fakeConnection() {
  const subscriptions: Array<{ prefix: string; deliver: (error: Error | null, msg: Msg) => void }> = [];
  const published: Array<{ subject: string; payload: string; reply: string; msgId: string | undefined }> = [];
  const nc = {
    subscribe: (subject: string, options: { callback: (error: Error | null, msg: Msg) => void }) => {
      subscriptions.push({ prefix: subject.slice(0, -1), deliver: options.callback });
    },
    publish: (subject: string, payload: string, options: { reply: string; headers: ReturnType<typeof headers> }) => {
      published.push({ subject, payload, reply: options.reply, msgId: options.headers.get('Nats-Msg-Id') });
    },
  } as unknown as NatsConnection;
  const answer = (reply: string, body: string, status?: { code: number; description: string }): void =>
    subscriptions
      .find((sub) => reply.startsWith(sub.prefix))
      ?.deliver(null, {
        subject: reply,
        string: () => body,
        headers: status === undefined ? undefined : headers(status.code, status.description),
      } as unknown as Msg);
  return { nc, published, answer };
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
    const { nc, published, answer } = fakeConnection();
    const acks = new StreamAcks(nc, 20);
    await expect(acks.publish('s', 'x', 'late')).rejects.toThrow('no acknowledgement from the stream within 20 ms');
    answer(published[0]!.reply, '{"stream":"ORDERS","seq":1}');
    const waiting = new StreamAcks(nc, 60_000).publish('s', 'x', 'open');
    const closing = new StreamAcks(nc, 60_000);
    const pending = closing.publish('s', 'x', 'pending');
    closing.close();
    await expect(pending).rejects.toThrow('connection closed');
    answer(published[1]!.reply, '{"stream":"ORDERS","seq":2}');
    await expect(waiting).resolves.toBeUndefined();
  });
});
