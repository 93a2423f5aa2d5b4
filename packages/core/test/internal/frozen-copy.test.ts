import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '@signalyard/core';
import { frozenCopy, frozenJsonCopy, frozenJsonValue, isJsonRecord } from '@signalyard/core/internal';

describe('frozenCopy (deep frozen copies of any data, marked with core’s one frozen mark)', () => {
  it('copies plain objects and lists deeply and freezes them, keeping class instances, functions and undefined', () => {
    const when = new Date(0);
    const fn = (): number => 1;
    const input = { a: [1, { b: 'x' }], when, fn, gone: undefined };
    const copy = frozenCopy(input);
    expect(copy).not.toBe(input);
    expect(copy).toEqual(input);
    expect(Object.isFrozen(copy) && Object.isFrozen(copy.a) && Object.isFrozen(copy.a[1])).toBe(true);
    expect(copy.when).toBe(when);
    expect(Object.isFrozen(when)).toBe(false);
    expect(copy.fn).toBe(fn);
    expect(Object.keys(copy)).toContain('gone');
    input.a.push(2);
    expect(copy.a).toHaveLength(2);
  });

  it('returns a copy it made before, and a frozen JSON value, unchanged', () => {
    const copy = frozenCopy({ n: [1] });
    expect(frozenCopy(copy)).toBe(copy);
    expect(frozenCopy({ inner: copy }).inner).toBe(copy);
    const json = frozenJsonCopy({ role: 'user', content: 'hi' }) as object;
    expect(frozenCopy(json)).toBe(json);
  });

  it('copies a frozen object it did not make (frozen is not the mark)', () => {
    const frozen = Object.freeze({ a: { b: 1 } });
    const copy = frozenCopy(frozen);
    expect(copy).not.toBe(frozen);
    expect(Object.isFrozen(copy.a)).toBe(true);
  });

  it('is not a frozen JSON value: a store copies it instead of sharing it (it may hold what JSON drops)', async () => {
    const copy = frozenCopy({ at: new Date(0), n: 1 });
    expect(isJsonRecord(copy)).toBe(false);
    expect(isJsonRecord(frozenJsonValue({ n: 1 }))).toBe(true);
    const store = new MemoryCheckpointStore();
    await store.save('k', copy, 0);
    expect((await store.load('k'))?.data).toEqual({ at: '1970-01-01T00:00:00.000Z', n: 1 });
  });

  it('preserves cycles and shared references, and keeps a "__proto__" key as data', () => {
    const shared = { s: 1 };
    const cyclic: Record<string, unknown> = { shared, again: shared };
    cyclic.self = cyclic;
    const copy = frozenCopy(cyclic);
    expect(copy.self).toBe(copy);
    expect(copy.shared).toBe(copy.again);
    const parsed = JSON.parse('{"__proto__": {"polluted": true}}') as object;
    const protoCopy = frozenCopy(parsed);
    expect(Object.getPrototypeOf(protoCopy)).toBe(Object.prototype);
    expect(Object.keys(protoCopy)).toEqual(['__proto__']);
  });

  it('returns primitives as they are, and passes a throwing getter’s error to the caller', () => {
    expect(frozenCopy(5)).toBe(5);
    expect(frozenCopy(null)).toBe(null);
    const hostile = {
      get boom(): never {
        throw new Error('getter');
      },
    };
    expect(() => frozenCopy(hostile)).toThrow('getter');
  });
});

describe('@signalyard/core/internal', () => {
  it('re-exports only modules under internal/', () => {
    const text = readFileSync(new URL('../../src/internal/index.ts', import.meta.url), 'utf8');
    const from = [...text.matchAll(/^export [^;]*? from '([^']+)';/gms)].map((m) => m[1] as string);
    expect(from.length).toBeGreaterThan(10);
    for (const specifier of from) expect(specifier, specifier).toMatch(/^\.\/[a-z0-9-]+\.js$/);
  });
});
