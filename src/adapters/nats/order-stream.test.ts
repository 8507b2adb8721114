import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { ErrUnavailable } from '../../domain/errors.ts';
import { ensureOrderStream, ORDER_STREAM_DEFAULTS, type OrderStreamSettings } from './order-stream.ts';

const settings: OrderStreamSettings = { ...ORDER_STREAM_DEFAULTS, subject: 'orders.placed' };

const apiError = (code: number): JetStreamApiError =>
  new JetStreamApiError({ code: 404, err_code: code, description: `api error ${code}` });

type Answer = { readonly subjects: readonly string[] } | Error;

/**
 * A JetStream manager that answers stream and consumer lookups as told and records what ensureOrderStream
 * adds: the decisions (create, keep, refuse, pass an error on) are ours, the wire is the client library's.
 */
function fakeManager(stream: Answer, consumer: 'exists' | Error) {
  const added: string[] = [];
  const jsm = {
    streams: {
      info: async () => {
        if (stream instanceof Error) throw stream;
        return { config: { subjects: stream.subjects } };
      },
      add: async (config: { name: string }) => void added.push(`stream ${config.name}`),
    },
    consumers: {
      info: async () => {
        if (consumer instanceof Error) throw consumer;
        return {};
      },
      add: async (_stream: string, config: { durable_name: string }) => void added.push(`consumer ${config.durable_name}`),
    },
  } as unknown as JetStreamManager;
  return { jsm, added };
}

describe('ensureOrderStream (rule EVT-7-delivery, start-up)', () => {
  it('[EVT-6-subject-payload] creates the stream and the durable consumer when neither exists', async () => {
    const { jsm, added } = fakeManager(apiError(JetStreamApiCodes.StreamNotFound), apiError(JetStreamApiCodes.ConsumerNotFound));
    await ensureOrderStream(jsm, settings);
    expect(added).toEqual(['stream ORDERS', 'consumer orders-notifier']);
  });

  it('keeps an existing stream that captures the subject, and an existing consumer', async () => {
    const { jsm, added } = fakeManager({ subjects: ['other.subject', 'orders.placed'] }, 'exists');
    await ensureOrderStream(jsm, settings);
    expect(added).toEqual([]);
  });

  it('[EVT-6-subject-payload] refuses an existing stream that does not capture the subject, and adds nothing', async () => {
    const { jsm, added } = fakeManager({ subjects: ['other.subject'] }, apiError(JetStreamApiCodes.ConsumerNotFound));
    const failure = ensureOrderStream(jsm, settings);
    await expect(failure).rejects.toBeInstanceOf(ErrUnavailable);
    await expect(failure).rejects.toThrow('publisher: stream ORDERS exists but does not capture subject orders.placed');
    expect(added).toEqual([]);
  });

  // Only "not found" means create: any other failure (a timeout, another API error) stops start-up as it is.
  it.each([
    ['a plain error', new Error('request timed out')],
    ['another JetStream API error', apiError(JetStreamApiCodes.JetStreamNotEnabledForAccount)],
  ])('passes on %s from the stream lookup and creates nothing', async (_name, error) => {
    const { jsm, added } = fakeManager(error, apiError(JetStreamApiCodes.ConsumerNotFound));
    await expect(ensureOrderStream(jsm, settings)).rejects.toBe(error);
    expect(added).toEqual([]);
  });

  it.each([
    ['a plain error', new Error('request timed out')],
    ['another JetStream API error', apiError(JetStreamApiCodes.StreamNotFound)],
  ])('passes on %s from the consumer lookup and creates no consumer', async (_name, error) => {
    const { jsm, added } = fakeManager({ subjects: ['orders.placed'] }, error);
    await expect(ensureOrderStream(jsm, settings)).rejects.toBe(error);
    expect(added).toEqual([]);
  });
});
