/**
 * Health and readiness reports (spec 2.3, rules ADMIN-checker, HEALTH-*, READY-not-yet): one checker over
 * the components, the small interface every transport's admin routes are written against (spec 4.2).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Component } from './component.ts';

export interface HealthNode {
  readonly name: string;
  readonly status: string;
  readonly error?: string;
}

export interface HealthReport {
  readonly clean: boolean;
  readonly nodes: HealthNode[] | null;
}

export interface Checker {
  health(): Promise<HealthReport>;
  ready(): Promise<HealthReport>;
}

/** A hanging check fails its node after this long, without holding up the others. */
const CHECK_TIMEOUT_MS = 2_000;

/** Reports on the components that implement the capability; the others are left out. */
export class ComponentChecker implements Checker {
  readonly #components: readonly Component[];

  constructor(components: readonly Component[]) {
    this.#components = components;
  }

  health(): Promise<HealthReport> {
    return this.#report('health');
  }

  ready(): Promise<HealthReport> {
    return this.#report('ready');
  }

  async #report(capability: 'health' | 'ready'): Promise<HealthReport> {
    const capable = this.#components.filter((c) => c[capability] !== undefined);
    if (capable.length === 0) return { clean: true, nodes: null };
    const nodes = await Promise.all(capable.map((c) => probe(c.name, () => c[capability]!())));
    return { clean: nodes.every((n) => n.status === 'ok'), nodes };
  }
}

/** `ok`, or `unavailable` with the error's text (rule HEALTH-failing-status). */
async function probe(name: string, check: () => Promise<void>): Promise<HealthNode> {
  const timedOut = async (): Promise<never> => {
    await sleep(CHECK_TIMEOUT_MS, undefined, { ref: false });
    throw new Error(`${name}: check timed out`);
  };
  try {
    await Promise.race([check(), timedOut()]);
    return { name, status: 'ok' };
  } catch (error) {
    return { name, status: 'unavailable', error: error instanceof Error ? error.message : String(error) };
  }
}
