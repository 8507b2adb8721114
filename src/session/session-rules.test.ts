import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { FakeTimers } from '../../test/support/fake-timers.ts';
import { LogCapture } from '../../test/support/log-capture.ts';
import { REPO_ROOT } from '../../test/support/transports.ts';
import { loadServiceConfig } from '../config/service-config.ts';
import { sessionKeyFromVerifiedSubject as key } from '../domain/session-key.ts';
import { createLogger } from '../observability/logger.ts';
import { ErrNoDoneSignal, ErrNoScopeKey, ErrScopeFull, isSessionError } from './session-errors.ts';
import { SESSION_CAP, SESSION_LINGER_MS, SessionScope, type TimerPort } from './session-scope.ts';

// Rule-tagged checks of the session scope (spec 3.2): `[RULE-ID]` in a test name is a conformance case.

function scope(options: { lingerMs?: number; cap?: number; timers?: TimerPort } = {}) {
  const logs = new LogCapture();
  return { sessions: new SessionScope({ recentCapacity: 10, logger: createLogger('debug', logs), ...options }), logs };
}

const signal = new AbortController().signal;

describe('session scope rules (spec 3.2)', () => {
  it('[SESSION-no-key, ERR-session-errors, SESSION-identity, SESSION-R2-fallback] acquire errors change nothing and are session errors', () => {
    const { sessions } = scope({ cap: 1 });
    const noKey = () => sessions.acquire({ signal });
    const noSignal = () => sessions.acquire({ sessionKey: key('u1') });
    const full = () => sessions.acquire({ sessionKey: key('u2'), signal });
    expect(noKey).toThrow(ErrNoScopeKey);
    expect(noSignal).toThrow(ErrNoDoneSignal);
    expect(sessions.size).toBe(0);
    sessions.acquire({ sessionKey: key('u1'), signal });
    expect(full).toThrow(ErrScopeFull);
    expect(sessions.size).toBe(1);
    // Transports map every one of them to 503 / UNAVAILABLE.
    for (const fn of [noKey, noSignal, full]) expect(fn).toThrow(expect.toSatisfy(isSessionError));
  });

  it('[LIMIT-session-cap, LIMIT-linger-constant, SESSION-linger-start, CONFIG-constants] cap 50,000 and linger 5 min are constants', () => {
    expect({ SESSION_CAP, SESSION_LINGER_MS }).toEqual({ SESSION_CAP: 50_000, SESSION_LINGER_MS: 300_000 });
    const timers = new FakeTimers();
    const { sessions } = scope({ timers });
    for (let i = 0; i < 50_000; i++) sessions.acquire({ sessionKey: key(`user-${i}`), signal })();
    expect(sessions.size).toBe(50_000);
    expect(sessions.stateOf(key('user-0'))).toBe('lingering');
    expect(new Set([...timers.pending.values()].map((t) => t.ms))).toEqual(new Set([300_000]));
    expect(() => sessions.acquire({ sessionKey: key('user-50000'), signal })).toThrow(ErrScopeFull);
    expect(() => sessions.acquire({ sessionKey: key('user-50000'), signal })).toThrow('session: scope full (50000 live instances)');
    const config = loadServiceConfig({ JWT_SECRET: 'x'.repeat(32), SESSION_LINGER: '1s', SESSION_CAP: '1', SESSION_LINGER_MS: '1' }, { embedded: false });
    expect(JSON.stringify(config)).not.toMatch(/linger|cap/i);
  });

  it('[SESSION-R1-release, SESSION-linger-start, SESSION-R3-cancel, SESSION-R4-flush-safe, SESSION-R6-own-context, SESSION-R2-fallback] release, linger, fallback and flush', async () => {
    const timers = new FakeTimers();
    const { sessions, logs } = scope({ lingerMs: 1000, timers });
    const u = key('user-1');
    {
      // Rule 1: the returned release function is also disposable.
      using lease = sessions.acquire({ sessionKey: u, signal: new AbortController().signal });
      expect(typeof lease[Symbol.dispose]).toBe('function');
      lease.session.recordView('o-1');
      expect(sessions.stateOf(u)).toBe('live');
    }
    expect(sessions.stateOf(u)).toBe('lingering');
    expect([...timers.pending.values()].map((t) => t.ms)).toEqual([1000]);
    // Rule 3: cancelling one holder's context never closes an instance another holder uses.
    const a = new AbortController();
    const b = new AbortController();
    const first = sessions.acquire({ sessionKey: u, signal: a.signal });
    sessions.acquire({ sessionKey: u, signal: b.signal });
    expect(timers.pending.size).toBe(0);
    expect(first.session.recent()).toEqual(['o-1']);
    a.abort();
    await Promise.resolve();
    expect(sessions.stateOf(u)).toBe('live');
    // Rule 2: the forgotten release happens when the context ends; rule 6: the instance outlives it.
    b.abort();
    await Promise.resolve();
    expect(sessions.stateOf(u)).toBe('lingering');
    const again = sessions.acquire({ sessionKey: u, signal: new AbortController().signal });
    expect(again.session).toBe(first.session);
    // Rule 4: flush reads a snapshot that later writes cannot change, on the scope's own timer.
    const snapshot = again.session.snapshot();
    again.session.recordView('o-2');
    expect(snapshot.recent).toEqual(['o-1']);
    again();
    expect(logs.find('session: closed')).toEqual([]);
    timers.advance(1000);
    expect(logs.find('session: closed')).toEqual([expect.objectContaining({ user: u, views: 2, recent: ['o-2', 'o-1'] })]);
    expect(sessions.stateOf(u)).toBe('absent');
  });

  it('[SESSION-key] the session key is a distinct type: a bare string does not type-check', () => {
    const probe = `${REPO_ROOT}src/session/__session-key-probe__.ts`;
    const source = [
      "import type { SessionKey } from '../domain/session-key.ts';",
      "import { sessionKeyFromVerifiedSubject } from '../domain/session-key.ts';",
      "export const minted: SessionKey = sessionKeyFromVerifiedSubject('user-1');",
      "export const bare: SessionKey = 'user-1';",
    ].join('\n');
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      skipLibCheck: true,
      types: [],
      lib: ['lib.es2022.d.ts'],
    };
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (name, version, ...rest) => (name === probe ? ts.createSourceFile(name, source, version) : getSourceFile(name, version, ...rest));
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => name === probe || fileExists(name);
    const program = ts.createProgram([probe], options, host);
    const lines = ts.getPreEmitDiagnostics(program, program.getSourceFile(probe)).map((d) => d.file?.getLineAndCharacterOfPosition(d.start ?? 0).line);
    expect(lines.length).toBeGreaterThan(0);
    expect(new Set(lines)).toEqual(new Set([3])); // only the bare string fails
  });
});
