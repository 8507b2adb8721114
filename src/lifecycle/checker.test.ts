// ComponentChecker's edges (spec 2.3): failing checks of any kind, the timeout, concurrency, readiness (rule READY-not-yet).
import { describe, expect, it } from 'vitest';
import { ComponentChecker } from './checker.ts';
import type { Component } from './component.ts';

const healthy = (name: string): Component => ({ name, health: async () => {}, ready: async () => {} });

// Capable components only, in order, ok without an error field, and one failing node with its text while
// the others stay ok, are the healthz-clean, healthz-*-down and readiness cases over the real components.
describe('ComponentChecker (spec 2.3)', () => {
  it('a check that throws synchronously or rejects with a non-Error is still a failing node', async () => {
    const checker = new ComponentChecker([
      {
        name: 'sync',
        health: () => {
          throw new Error('sync boom');
        },
      },
      { name: 'odd', health: () => Promise.reject('plain text') },
    ]);
    await expect(checker.health()).resolves.toEqual({
      clean: false,
      nodes: [
        { name: 'sync', status: 'unavailable', error: 'sync boom' },
        { name: 'odd', status: 'unavailable', error: 'plain text' },
      ],
    });
  });

  it('a hanging check times out after 2 s as a failing node, without holding up the other nodes', async () => {
    const checker = new ComponentChecker([{ name: 'publisher', health: () => new Promise<void>(() => {}) }, healthy('database')]);
    const report = await checker.health();
    expect(report).toEqual({
      clean: false,
      nodes: [
        { name: 'publisher', status: 'unavailable', error: 'publisher: check timed out' },
        { name: 'database', status: 'ok' },
      ],
    });
  });

  it('checks run concurrently: every check starts before the first ends', async () => {
    // Order, not milliseconds: every check has started before the first one finishes.
    const journal: string[] = [];
    const slow = (name: string): Component => ({
      name,
      health: () => (
        journal.push(`start ${name}`),
        new Promise<void>((resolve) => setTimeout(() => (journal.push(`end ${name}`), resolve()), 50))
      ),
    });
    const report = await new ComponentChecker([slow('a'), slow('b'), slow('c')]).health();
    expect(report.clean).toBe(true);
    expect(journal.slice(0, 3)).toEqual(['start a', 'start b', 'start c']);
  });

  it('[READY-not-yet] readiness asks only the components that implement ready, and a failing one makes it not clean', async () => {
    const checker = new ComponentChecker([
      { name: 'database', health: async () => {} },
      { name: 'api', ready: () => Promise.reject(new Error('api: not accepting connections yet')) },
    ]);
    await expect(checker.ready()).resolves.toEqual({
      clean: false,
      nodes: [{ name: 'api', status: 'unavailable', error: 'api: not accepting connections yet' }],
    });
  });
});
