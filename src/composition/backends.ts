/**
 * Everything the core needs from the outside world, as ports, plus the components that own the connections
 * (health nodes database, cache, publisher). The embedded ring's fakes and the real adapters both produce it.
 */
import type { Component } from '../lifecycle/component.ts';
import type { CredentialStore } from '../ports/credential-store.ts';
import type { OrderCache } from '../ports/order-cache.ts';
import type { OrderEventPublisher, OrderEventSubscriber } from '../ports/order-events.ts';
import type { OrderRepository } from '../ports/order-repository.ts';
import type { NotificationLedger, OutboxStore } from '../ports/outbox.ts';
import type { RateLimitStore } from '../rate-limit/store.ts';
import type { BackendMetricSources } from '../observability/metrics.ts';

/** Builds the store shared by every replica (RATE_LIMIT_STORE=redis); a component, so it connects in init. */
export type SharedRateLimitFactory = (bucket: { readonly rate: number; readonly burst: number }) => RateLimitStore & Component;

export interface Backends {
  readonly repository: OrderRepository;
  readonly credentials: CredentialStore;
  readonly cache: OrderCache;
  readonly publisher: OrderEventPublisher;
  readonly subscriber: OrderEventSubscriber;
  /** The transactional outbox the relay reads (rule EVT-7-delivery); written by repository.place. */
  readonly outbox: OutboxStore;
  /** What the notifier already announced, shared by every replica. */
  readonly ledger: NotificationLedger;
  /** Real backends only: the shared rate-limit store, built only when RATE_LIMIT_STORE=redis asks for it. */
  readonly sharedRateLimit?: SharedRateLimitFactory;
  /** Real backends: what the scrape reads of their connections (observability/metrics.ts). */
  readonly metrics?: BackendMetricSources;
  /** In dependency order; they are initialised before the service components. */
  readonly components: readonly Component[];
}
