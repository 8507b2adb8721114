/**
 * The order-placed stream and its one durable consumer, declared at start-up (rule EVT-7-delivery): created
 * when missing; an existing stream (an operator's, with its own limits, which we respect) must capture our subject.
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { ErrUnavailable } from '../../domain/errors.ts';

export interface OrderStreamSettings {
  readonly stream: string;
  readonly subject: string;
  /** Durable consumer shared by every replica: each message goes to one of them. */
  readonly durable: string;
  /** The broker drops a second message with the same Nats-Msg-Id within this window. */
  readonly duplicateWindowMs: number;
  /** Limits retention: the count of published events stays visible. */
  readonly maxAgeMs: number;
  /** An unacknowledged delivery is redelivered (possibly to another replica) after this long. */
  readonly ackWaitMs: number;
}

export const ORDER_STREAM_DEFAULTS: Omit<OrderStreamSettings, 'subject'> = {
  stream: 'ORDERS',
  durable: 'orders-notifier',
  duplicateWindowMs: 10 * 60_000,
  maxAgeMs: 7 * 24 * 60 * 60_000,
  // Short: a delivery lost with a dropped connection (a stalled broker) comes back soon; the notifier's
  // ledger makes an early redelivery of an event still being handled harmless.
  ackWaitMs: 4_000,
};

function isNotFound(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}

export async function ensureOrderStream(jsm: JetStreamManager, settings: OrderStreamSettings): Promise<void> {
  let subjects: readonly string[] | undefined;
  try {
    subjects = (await jsm.streams.info(settings.stream)).config.subjects;
  } catch (error) {
    if (!isNotFound(error, JetStreamApiCodes.StreamNotFound)) throw error;
  }
  if (subjects === undefined) {
    await jsm.streams.add({
      name: settings.stream,
      subjects: [settings.subject],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: nanos(settings.maxAgeMs),
      duplicate_window: nanos(settings.duplicateWindowMs),
      num_replicas: 1,
    });
  } else if (!subjects.includes(settings.subject)) {
    throw new ErrUnavailable(`publisher: stream ${settings.stream} exists but does not capture subject ${settings.subject}`);
  }
  try {
    await jsm.consumers.info(settings.stream, settings.durable);
  } catch (error) {
    if (!isNotFound(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
    await jsm.consumers.add(settings.stream, {
      durable_name: settings.durable,
      ack_policy: AckPolicy.Explicit,
      // Everything the stream holds: stream and consumer are created together, before the first event.
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(settings.ackWaitMs),
      // Unlimited redelivery: an event is never given up on (the notifier's ledger keeps it to one line).
      max_deliver: -1,
      filter_subject: settings.subject,
    });
  }
}
