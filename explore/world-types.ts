// The shapes the World keeps: run options and result, answers, clients, create requests and the
// session and key models the checks compare the service with.
import type { ErrorKind } from '../src/transports/errors/table.ts';
import type { Violation } from './invariants.ts';
import type { Variant } from './replica.ts';

export interface RunOptions {
  readonly seed: number;
  readonly replicas: number;
  readonly users: number;
  readonly variant?: Variant | undefined;
}

export interface RunResult {
  readonly digest: string;
  readonly checks: number;
  readonly violation: Violation | undefined;
  readonly trace: readonly string[];
}

export type Status = number | 'timeout' | 'refused' | 'gone';
export interface Answer {
  readonly status: number | 'refused' | 'gone';
  readonly body: unknown;
  readonly kind?: ErrorKind;
  /** Refused by the rate limiter. */
  readonly limited?: boolean;
  /** When the rate limiter let it through: what the service's clock read when it started the work. */
  readonly admittedAt?: number;
}

export type Operation = 'login' | 'createOrder' | 'getOrder' | 'listOrders' | 'recent';
export interface Outgoing {
  body?: string;
  params?: Record<string, string>;
  query?: URLSearchParams;
  headers?: Record<string, string>;
}

export interface Attempt {
  readonly at: number;
  status: Status | undefined;
  orderId: string | undefined;
}
export interface CreateRequest {
  readonly id: number;
  readonly user: number;
  readonly item: string;
  readonly quantity: number;
  readonly key: string | undefined;
  readonly attempts: Attempt[];
}

export interface Client {
  readonly index: number;
  readonly userId: string;
  readonly username: string;
  readonly password: string;
  /** The TCP peer address when it connects directly, as the socket reports it. */
  readonly address: string;
  /** The address the rate limiter must key it on (rule LIMIT-rate-keying), as the explorer reads the rule. */
  readonly limitKey: string;
  token: string | undefined;
  tokenIat: number;
  /** A protected request was answered 401: the client logs in again before its next one (as clients refresh). */
  stale: boolean;
  readonly requests: CreateRequest[];
  /** Orders this client has seen answered (201, a list page): what it may ask for later. */
  readonly known: string[];
}

/** What the explorer believes one user's session on one replica process holds (spec 2.2, 3.2). */
export interface SessionModel {
  recent: string[];
  views: number;
  lastUse: number;
}

/** A key's claim as the explorer models it (IDEM-replay, IDEM-expiry): the order it made, until when. */
export interface KeyClaim {
  readonly orderId: string;
  readonly item: string;
  readonly quantity: number;
  readonly expiresAt: number;
}
