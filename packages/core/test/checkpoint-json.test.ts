import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckpointDataError } from '@signalyard/core';
import { MemoryCheckpointStore } from '@signalyard/core';
import { frozenJsonCopy, frozenJsonValue, isJsonRecord, serializeCheckpointData } from '@signalyard/core/internal';

const anything = fc.anything({
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withSparseArray: true,
  withBoxedValues: true,
  withNullPrototype: true,
  withObjectString: true,
});

/** What the store must give back for `data`: JSON.parse of its serialization, or the same refusal. */
function expected(data: unknown): { data: unknown } | { error: string } {
  try {
    return { data: JSON.parse(serializeCheckpointData(data)) as unknown };
  } catch (error) {
    return { error: (error as CheckpointDataError).code };
  }
}

describe('MemoryCheckpointStore keeps data with JSON semantics without JSON text', () => {
  it('for anything, load returns exactly what JSON.parse(serializeCheckpointData(data)) does, or save refuses it alike', async () => {
    await fc.assert(
      fc.asyncProperty(anything, async (data) => {
        const store = new MemoryCheckpointStore();
        const want = expected(data);
        let saved: unknown;
        try {
          await store.save('k', data, 0);
          saved = { data: (await store.load('k'))?.data };
        } catch (error) {
          saved = { error: (error as CheckpointDataError).code };
        }
        expect(saved).toStrictEqual(want);
      }),
      { numRuns: 300 },
    );
  });

  it('normalizes what JSON normalizes: -0, undefined members and items, holes, toJSON with its key', async () => {
    const store = new MemoryCheckpointStore();
    const data = {
      zero: -0,
      gone: undefined,
      list: [undefined, 1, , 3], // eslint-disable-line no-sparse-arrays
      keyed: { toJSON: (key: string) => `key ${key}` },
      at: new Date(Date.UTC(2026, 0, 1)),
    };
    await store.save('k', data, 0);
    const loaded = (await store.load('k'))?.data;
    expect(loaded).toStrictEqual(JSON.parse(JSON.stringify(data)));
    expect(Object.is((loaded as { zero: number }).zero, 0)).toBe(true);
  });

  it('keeps a "__proto__" key of parsed data as an own property', async () => {
    const store = new MemoryCheckpointStore();
    const data = JSON.parse('{"__proto__":{"x":1},"a":[{"__proto__":2}]}') as unknown;
    await store.save('k', data, 0);
    const loaded = (await store.load('k'))?.data as Record<string, unknown>;
    expect(JSON.stringify(loaded)).toBe(JSON.stringify(data));
    expect(Object.getPrototypeOf(loaded)).toBe(Object.prototype);
  });
});

describe('a frozen JSON record (frozenJsonCopy of a flat message)', () => {
  it('is a frozen copy of a plain object of JSON primitives, equal to it, and recognised as such', () => {
    const message = { role: 'user', content: 'hi', name: undefined };
    const record = frozenJsonCopy(message);
    expect(record).toStrictEqual({ role: 'user', content: 'hi' });
    expect(record).not.toBe(message);
    expect(Object.isFrozen(record)).toBe(true);
    expect(isJsonRecord(record as object)).toBe(true);
    expect(isJsonRecord(message)).toBe(false);
    expect(isJsonRecord({ ...record })).toBe(false); // a spread copy is an ordinary object
    expect(isJsonRecord(Object.create(record as object) as object)).toBe(false);
  });

  it('carries a mark no copy can take along: descriptors, structuredClone, Object.assign, a Proxy', () => {
    const record = frozenJsonCopy({ role: 'user', content: 'hi' }) as object;
    expect(Reflect.ownKeys(record)).toEqual(['role', 'content']); // nothing to see
    const described: object = Object.defineProperties({}, Object.getOwnPropertyDescriptors(record));
    expect(isJsonRecord(described)).toBe(false);
    expect(isJsonRecord(structuredClone(record))).toBe(false);
    expect(isJsonRecord(Object.assign({}, record))).toBe(false);
    expect(isJsonRecord(new Proxy(record, {}))).toBe(false);
  });

  it('is not made of an object with a null prototype (left to JSON itself)', () => {
    expect(frozenJsonCopy(Object.create(null) as object)).toBeUndefined();
  });

  it('is shared by the memory store (it cannot change), while loads still get mutable copies', async () => {
    const store = new MemoryCheckpointStore();
    const record = frozenJsonCopy({ role: 'user', content: 'hi' }) as object;
    await store.save('k', { history: [record] }, 0);
    const loaded = (await store.load('k'))?.data as { history: Record<string, unknown>[] };
    expect(loaded).toStrictEqual({ history: [{ role: 'user', content: 'hi' }] });
    expect(loaded.history[0]).not.toBe(record);
    expect(Object.isFrozen(loaded.history[0])).toBe(false);
    (loaded.history[0] as Record<string, unknown>).content = 'changed';
    expect((await store.load('k'))?.data).toStrictEqual({ history: [{ role: 'user', content: 'hi' }] });
  });
});

describe('frozenJsonValue', () => {
  it('freezes and marks the object or list it is given, in place', () => {
    const message = { role: 'user', content: 'hi' };
    expect(frozenJsonValue(message)).toBe(message);
    expect(Object.isFrozen(message)).toBe(true);
    expect(isJsonRecord(message)).toBe(true);
    const list = [message, frozenJsonCopy({ role: 'assistant', content: 'yo' }) as object];
    expect(frozenJsonValue(list)).toBe(list);
    expect(Object.isFrozen(list)).toBe(true);
    expect(isJsonRecord(list)).toBe(true);
    expect(Array.isArray(list)).toBe(true);
    expect(list).toStrictEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'yo' },
    ]);
    expect(isJsonRecord([...list])).toBe(false);
    expect(isJsonRecord(list.slice())).toBe(false);
  });

  it('makes a list the memory store shares whole between versions, while loads get mutable copies', async () => {
    const store = new MemoryCheckpointStore();
    const list = frozenJsonValue([frozenJsonCopy({ role: 'user', content: 'hi' }) as object]);
    await store.save('k', { history: list }, 0);
    await store.save('k', { history: list }, 1);
    const [v2, v1] = await collectHistory(store.history('k'));
    expect(v2).toStrictEqual({ history: [{ role: 'user', content: 'hi' }] });
    expect(v1).toStrictEqual(v2);
    const loaded = (await store.load('k'))?.data as { history: Record<string, unknown>[] };
    expect(loaded.history).not.toBe(list);
    expect(Object.isFrozen(loaded.history)).toBe(false);
    loaded.history.push({ role: 'user', content: 'more' });
    expect((await store.load('k'))?.data).toStrictEqual({ history: [{ role: 'user', content: 'hi' }] });
  });
});

describe('frozenJsonCopy', () => {
  it('is a deep copy with JSON semantics, every object and list frozen and marked', () => {
    const value = {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'c', arguments: { q: [1, -0, undefined] } }],
      x: undefined,
    };
    const copy = frozenJsonCopy(value) as { toolCalls: { arguments: { q: unknown[] } }[] };
    expect(copy).toStrictEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'c', arguments: { q: [1, 0, null] } }],
    });
    expect(copy).not.toBe(value);
    for (const part of [
      copy,
      copy.toolCalls,
      copy.toolCalls[0],
      copy.toolCalls[0]!.arguments,
      copy.toolCalls[0]!.arguments.q,
    ]) {
      expect(Object.isFrozen(part) && isJsonRecord(part as object)).toBe(true);
    }
    value.toolCalls[0]!.arguments.q[0] = 2;
    expect(copy.toolCalls[0]!.arguments.q[0]).toBe(1);
  });

  it('shares frozen values inside as they are, and returns primitives unchanged', () => {
    const shared = frozenJsonCopy({ role: 'user', content: 'hi' }) as object;
    const copy = frozenJsonCopy({ list: [shared] }) as { list: object[] };
    expect(copy.list[0]).toBe(shared);
    expect(frozenJsonCopy('text')).toBe('text');
    expect(frozenJsonCopy(null)).toBeNull();
  });

  it.each([
    ['a toJSON', { at: new Date(0) }],
    ['a class instance', { inner: new (class A {})() }],
    ['a BigInt', { n: 1n }],
    ['a NaN', { n: Number.NaN }],
    ['a function', { f: () => 1 }],
    [
      'a cycle',
      (() => {
        const o: Record<string, unknown> = {};
        o.self = o;
        return o;
      })(),
    ],
    [
      'a throwing getter',
      Object.defineProperty({}, 'boom', {
        enumerable: true,
        get: () => {
          throw new Error('boom');
        },
      }),
    ],
  ])('is undefined for a value with %s (left for JSON itself to judge)', (_title, value) => {
    expect(frozenJsonCopy(value)).toBeUndefined();
  });
});

async function collectHistory(items: AsyncIterable<{ data: unknown }>): Promise<unknown[]> {
  const all: unknown[] = [];
  for await (const item of items) all.push(item.data);
  return all;
}
