// The variable parsers (rule CONFIG-formats): durations, positive integers, listen addresses, ConfigError, readAll.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseDuration, parseListenAddress, positiveIntVar, readAll } from './env.ts';

/** Runs `fn`, expects a ConfigError, and returns it. */
function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

/** Runs `fn`, expects a ConfigError, and returns its message. */
const configError = (fn: () => unknown): string => configErrorOf(fn).message;

describe('parseDuration (JWT_EXPIRY format)', () => {
  it.each([
    ['30m', 30 * 60_000],
    ['2h', 2 * 3_600_000],
    ['1h', 3_600_000],
    ['1h30m', 90 * 60_000],
    ['45s', 45_000],
    ['500ms', 500],
    ['1h30m15s', 5_415_000],
    ['1.5h', 5_400_000],
    // A fraction of more than one digit, alone and after another unit.
    ['1.25s', 1_250],
    ['1m0.125s', 60_125],
  ])('%s is %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '30', 'h', 'abc', '-5m', '0m', '0s', '1d', '1 h', '1h 30m', ' 2h', '2h ', '2H', '1y', '+1h', '1e3s', '.5h'])(
    'rejects %j',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );
});

describe('positiveIntVar (RATE_LIMIT_RPS, SESSION_RECENT)', () => {
  // The default when unset or empty, and a parsed value, are the tagged CONFIG-defaults case in rules.test.ts.
  it.each(['0', '-1', '1.5', '5.0', 'abc', '1e3', '0x10', ' 5', '5 ', '+5', '99999999999999999999', 'Infinity', 'NaN'])(
    'rejects %j naming the variable, not echoing the value',
    (text) => {
      const message = configError(() => positiveIntVar({ SESSION_RECENT: text }, 'SESSION_RECENT', 10));
      expect(message).toBe('config: SESSION_RECENT must be a positive integer');
    },
  );
});

describe('parseListenAddress (HTTP_ADDR, ADMIN_ADDR)', () => {
  it.each([
    [':8080', { host: undefined, port: 8080 }],
    [':0', { host: undefined, port: 0 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['0.0.0.0:8081', { host: '0.0.0.0', port: 8081 }],
    ['localhost:3000', { host: 'localhost', port: 3000 }],
    ['[::1]:9000', { host: '::1', port: 9000 }],
    ['[::]:65535', { host: '::', port: 65_535 }],
  ])('%s → %o', (text, expected) => {
    expect(parseListenAddress('HTTP_ADDR', text)).toEqual(expected);
  });

  it.each([
    '8080',
    'localhost',
    ':',
    '',
    ':65536',
    ':99999',
    ':123456',
    '::1:9000',
    '[::1]9000',
    '[::1]',
    ':-1',
    ':80a',
    '127.0.0.1:',
    'http://host:80',
    'host:port',
  ])('rejects %j naming the variable', (text) => {
    expect(configError(() => parseListenAddress('ADMIN_ADDR', text))).toBe('config: ADMIN_ADDR must be host:port or :port');
  });
});

describe('ConfigError', () => {
  it('[CONFIG-required] reads as a configuration error wherever it is printed (its name), not as a bare Error', () => {
    const error = new ConfigError([], ['JWT_SECRET']);
    expect(String(error)).toBe('ConfigError: config: missing required variable JWT_SECRET');
    expect(error.stack?.split('\n')[0]).toBe('ConfigError: config: missing required variable JWT_SECRET');
  });

  it('[CONFIG-all-at-once] several problems read as one line: the missing variables together, then each invalid one', () => {
    expect(new ConfigError(['JWT_EXPIRY must be a duration such as 30m or 2h'], ['POSTGRES_DSN', 'NATS_URL']).message).toBe(
      'config: missing required variables POSTGRES_DSN, NATS_URL; JWT_EXPIRY must be a duration such as 30m or 2h',
    );
    expect(new ConfigError('RATE_LIMIT_RPS must be a positive integer').message).toBe('config: RATE_LIMIT_RPS must be a positive integer');
  });
});

describe('readAll', () => {
  it('[CONFIG-all-at-once] calls every reader even after one failed, and throws one ConfigError with every problem, in order', () => {
    const called: string[] = [];
    const reader = (name: string, fails?: ConfigError) => () => {
      called.push(name);
      if (fails) throw fails;
      return name;
    };
    expect(readAll({ a: reader('a'), b: reader('b') })).toEqual({ a: 'a', b: 'b' });
    const error = configErrorOf(() =>
      readAll({
        a: reader('a', new ConfigError([], ['A'])),
        b: reader('b'),
        c: reader('c', new ConfigError('C must be a positive integer')),
        d: reader('d', new ConfigError(['D must be host:port'], ['E'])),
      }),
    );
    expect(called).toEqual(['a', 'b', 'a', 'b', 'c', 'd']);
    expect([error.missing, error.problems]).toEqual([
      ['A', 'E'],
      ['C must be a positive integer', 'D must be host:port'],
    ]);
  });

  it('passes any other error through at once: a fault is not a configuration problem', () => {
    const fault = new TypeError('bug');
    let after = false;
    expect(() =>
      readAll({
        a: () => {
          throw fault;
        },
        b: () => (after = true),
      }),
    ).toThrow(fault);
    expect(after).toBe(false);
  });
});
