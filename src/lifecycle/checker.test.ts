import { describe, expect, it } from 'vitest';
import { ComponentChecker, STATUS_FAILING, STATUS_OK } from './checker.ts';
import type { Component } from './component.ts';

const healthy = (name: string): Component => ({ name, health: async () => {}, ready: async () => {} });
const failing = (name: string, message: string): Component => ({
  name,
  health: async () => Promise.reject(new Error(message)),
  ready: async () => Promise.reject(new Error(message)),
});

describe('ComponentChecker (spec 2.3)', () => {
  it('lists only the components with the capability, in order, with status ok and no error field', async () => {
    const checker = new ComponentChecker([
      healthy('database'),
      { name: 'sessions' },
      { name: 'cache', health: async () => {} },
      { name: 'api', ready: async () => {} },
    ]);
    const health = await checker.health();
    expect(health).toEqual({ clean: true, nodes: [{ name: 'database', status: STATUS_OK }, { name: 'cache', status: STATUS_OK }] });
    expect(STATUS_OK).toBe('ok');
    for (const node of health.nodes!) expect(Object.keys(node)).toEqual(['name', 'status']);
    await expect(checker.ready()).resolves.toEqual({ clean: true, nodes: [{ name: 'database', status: 'ok' }, { name: 'api', status: 'ok' }] });
  });

  it('one failing node makes the report unclean with status `unavailable` and the error text; the others stay ok', async () => {
    const checker = new ComponentChecker([healthy('database'), failing('cache', 'cache: ping failed'), healthy('publisher')]);
    const report = await checker.health();
    expect(STATUS_FAILING).toBe('unavailable');
    expect(report).toEqual({
      clean: false,
      nodes: [
        { name: 'database', status: 'ok' },
        { name: 'cache', status: 'unavailable', error: 'cache: ping failed' },
        { name: 'publisher', status: 'ok' },
      ],
    });
  });

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
      health: () => (journal.push(`start ${name}`), new Promise<void>((resolve) => setTimeout(() => (journal.push(`end ${name}`), resolve()), 50))),
    });
    const report = await new ComponentChecker([slow('a'), slow('b'), slow('c')]).health();
    expect(report.clean).toBe(true);
    expect(journal.slice(0, 3)).toEqual(['start a', 'start b', 'start c']);
  });
});
