import type { Component } from '../lifecycle/component.ts';
import type { CredentialStore } from '../ports/credential-store.ts';
import type { OrderCache } from '../ports/order-cache.ts';
import type { OrderEventPublisher, OrderEventSubscriber } from '../ports/order-events.ts';
import type { OrderRepository } from '../ports/order-repository.ts';

/**
 * Everything the core needs from the outside world, as ports, plus the components that own the
 * connections (each with a health node: database, cache, publisher). Embedded (fakes) and real
 * adapters both produce this.
 */
export interface Backends {
  readonly repository: OrderRepository;
  readonly credentials: CredentialStore;
  readonly cache: OrderCache;
  readonly publisher: OrderEventPublisher;
  readonly subscriber: OrderEventSubscriber;
  /** In dependency order; they are initialised before the service components. */
  readonly components: readonly Component[];
}
