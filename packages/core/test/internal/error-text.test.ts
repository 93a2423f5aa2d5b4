import { describe, expect, it } from 'vitest';
import { errorCode, errorText } from '@signalyard/core/internal';

const hostile: [string, unknown][] = [
  [
    'a throwing message getter',
    Object.defineProperty({}, 'message', {
      get: () => {
        throw new Error('no');
      },
    }),
  ],
  [
    'a revoked Proxy',
    (() => {
      const p = Proxy.revocable({}, {});
      p.revoke();
      return p.proxy;
    })(),
  ],
  [
    'a Proxy whose every trap throws',
    new Proxy(
      {},
      {
        get: () => {
          throw new Error('get');
        },
        has: () => {
          throw new Error('has');
        },
        getPrototypeOf: () => {
          throw new Error('proto');
        },
        ownKeys: () => {
          throw new Error('keys');
        },
      },
    ),
  ],
];

describe('errorText', () => {
  it('is the message of an Error or any object with a string message', () => {
    expect(errorText(new TypeError('bad'))).toBe('bad');
    expect(errorText({ message: 'plain' })).toBe('plain');
  });

  it('describes other values', () => {
    expect(errorText('oops')).toContain('oops');
    expect(errorText(undefined)).toBe('undefined');
    expect(errorText(42)).toContain('42');
  });

  it.each(hostile)('never throws, even on %s', (_name, value) => {
    expect(typeof errorText(value)).toBe('string');
  });
});

describe('errorCode', () => {
  it('is a string code or undefined', () => {
    expect(errorCode(Object.assign(new Error('x'), { code: 'E_X' }))).toBe('E_X');
    expect(errorCode({ code: 7 })).toBeUndefined();
    expect(errorCode(null)).toBeUndefined();
  });

  it.each(hostile)('never throws, even on %s', (_name, value) => {
    expect(errorCode(value)).toBeUndefined();
  });
});
