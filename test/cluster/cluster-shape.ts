import type { Haproxy } from './haproxy.ts';

/** What the cluster checks (cluster.test.ts) run on, whichever way it was started. */

/** Small, so one client can press on it at 4x without a load generator (rule CLUSTER-rate). */
export const CLUSTER_RPS = 20;

export interface ClusterReplica {
  readonly name: string;
  readonly baseUrl: string;
  readonly adminUrl: string;
  /** Its JSON log lines so far, oldest first. */
  lines(): Record<string, unknown>[];
  /** SIGKILL: no graceful stop, what it held in memory is lost. */
  kill(): void;
  /** Resolves once it has exited. */
  exited(): Promise<void>;
}

export interface Cluster {
  /** haproxy's public port: HTTP/1.1, h2c and gRPC. */
  readonly balancerUrl: string;
  readonly replicas: readonly ClusterReplica[];
  readonly haproxy: Haproxy;
  /** A new user in the cluster's schema (written as `orders-admin users add` does). */
  addUser(): Promise<{ username: string; password: string }>;
  /** `order placed` lines per order id, across every replica's stdout. */
  placedCounts(): Map<string, number>;
  /** True once the shared notifier consumer has nothing left to deliver or to be acknowledged. */
  notifierIdle(): Promise<boolean>;
  /** A source address of a client of its own (the rate limiter's key), fresh every call. */
  clientAddress(): string;
  close(): Promise<void>;
}
