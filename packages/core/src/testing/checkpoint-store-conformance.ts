import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { CheckpointConflictError } from '../errors/checkpoint-conflict-error.js';
import { historyCases } from './checkpoint-history-cases.js';
import {
  collect,
  json,
  rejectsWithCode,
  type CheckpointConformanceOptions,
  type CheckpointStoreFactory,
  type ConformanceHarness,
  type StoreTest,
} from './conformance-support.js';

/**
 * Registers the checkpoint-store conformance suite: compare-and-set, the JSON criterion,
 * `list(prefix)` without wildcard leaks, `delete`, concurrent saves, mutation after save,
 * `close`, and — for a store that implements `history` and `loadVersion` — the kept versions:
 * their order, pruning to `keepVersions`, `before`/`limit`, `loadVersion`, `delete` removing
 * them, and a gap-free version sequence under concurrent saves. A store without `history`
 * passes the rest. Written with `node:assert`, so it runs under any test runner: pass its
 * `describe` and `it`. Every store in the Signalyard repository runs it; a third-party store can too.
 *
 * The factory receives `{ keepVersions }` when a case needs a particular number of kept versions,
 * and nothing when any will do. With `options.clock`, the store takes a `clock` option: the
 * factory then also receives `{ clock }` in the cases that drive time with one.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest';
 * import { checkpointStoreConformance } from '@signalyard/core/testing';
 *
 * checkpointStoreConformance('MyStore', (opts) => new MyStore({ ...opts }), { describe, it });
 * ```
 */
export function checkpointStoreConformance(
  name: string,
  factory: CheckpointStoreFactory,
  harness: ConformanceHarness,
  options: CheckpointConformanceOptions = {},
): void {
  const { describe, it } = harness;

  /** Runs `fn` with a fresh store and a unique key prefix, closing the store afterwards. */
  const test: StoreTest = (title, fn, opts) => {
    it(title, async () => {
      const store = await (opts === undefined ? factory() : factory(opts));
      const prefix = `conformance-${randomUUID()}:`;
      try {
        await fn(store, prefix);
      } finally {
        for await (const key of store.list(prefix)) await store.delete(key);
        await store.close?.();
      }
    });
  };

  describe(`${name}: checkpoint store conformance`, () => {
    describe('compare-and-set', () => {
      compareAndSetCases(test);
      concurrentSaveCases(test);
    });
    describe('the JSON criterion', () => {
      jsonCriterionCases(test);
    });
    describe('isolation from the caller', () => {
      isolationCases(test);
    });
    describe('delete and list', () => {
      deleteAndListCases(test);
    });
    describe('history', () => {
      historyCases(test);
    });
    describe('close', () => {
      closeCases(it, factory);
    });
    if (options.clock === true) {
      describe('clock', () => {
        clockCases(test);
      });
    }
  });
}

/** The conformance cases of a store that takes a `clock`: every save is stamped with its time. */
function clockCases(test: StoreTest): void {
  let now = 0;
  const clock: Clock = { now: () => now };
  test(
    'stamps each save with the time its clock reads, and each kept version keeps its own',
    async (store, p) => {
      now = Date.UTC(2031, 0, 2, 3, 4, 5, 678);
      await store.save(`${p}k`, 1, 0);
      assert.equal((await store.load(`${p}k`))?.updatedAt, '2031-01-02T03:04:05.678Z');
      now += 90_000;
      await store.save(`${p}k`, 2, 1);
      assert.equal((await store.load(`${p}k`))?.updatedAt, '2031-01-02T03:05:35.678Z');
      if (store.history !== undefined) {
        const kept = await collect(store.history(`${p}k`));
        assert.deepEqual(
          kept.map((c) => [c.version, c.updatedAt]),
          [
            [2, '2031-01-02T03:05:35.678Z'],
            [1, '2031-01-02T03:04:05.678Z'],
          ],
        );
        assert.equal((await store.loadVersion?.(`${p}k`, 1))?.updatedAt, '2031-01-02T03:04:05.678Z');
      }
    },
    { clock },
  );
}

/** The conformance cases of compare-and-set. */
function compareAndSetCases(test: StoreTest): void {
  test('load of a missing key resolves undefined', async (store, p) => {
    assert.equal(await store.load(`${p}missing`), undefined);
  });

  test('save with version 0 creates the checkpoint at version 1', async (store, p) => {
    assert.equal(await store.save(`${p}k`, { n: 1 }, 0), 1);
    const loaded = await store.load(`${p}k`);
    assert.ok(loaded);
    assert.equal(loaded.version, 1);
    assert.deepEqual(loaded.data, { n: 1 });
    assert.ok(!Number.isNaN(Date.parse(loaded.updatedAt)), `updatedAt ${loaded.updatedAt} is not a date`);
  });

  test('each successful save returns expected + 1', async (store, p) => {
    let version = 0;
    for (let i = 1; i <= 5; i++) {
      const next = await store.save(`${p}k`, { i }, version);
      assert.equal(next, version + 1);
      version = next;
    }
    assert.deepEqual((await store.load(`${p}k`))?.data, { i: 5 });
    assert.equal((await store.load(`${p}k`))?.version, 5);
  });

  test('a stale version is refused with CheckpointConflictError and nothing is written', async (store, p) => {
    await store.save(`${p}k`, { n: 1 }, 0);
    await store.save(`${p}k`, { n: 2 }, 1);
    const error = await rejectsWithCode(store.save(`${p}k`, { n: 'stale' }, 1), 'CHECKPOINT_CONFLICT');
    assert.ok(CheckpointConflictError.isInstance(error));
    assert.equal(error.key, `${p}k`);
    assert.equal(error.expected, 1);
    assert.equal(error.actual, 2);
    const loaded = await store.load(`${p}k`);
    assert.equal(loaded?.version, 2);
    assert.deepEqual(loaded.data, { n: 2 });
  });

  test('version 0 on an existing key conflicts with actual = the stored version', async (store, p) => {
    await store.save(`${p}k`, 'first', 0);
    const error = await rejectsWithCode(store.save(`${p}k`, 'second', 0), 'CHECKPOINT_CONFLICT');
    assert.ok(CheckpointConflictError.isInstance(error));
    assert.equal(error.expected, 0);
    assert.equal(error.actual, 1);
    assert.equal((await store.load(`${p}k`))?.data, 'first');
  });

  test('a version above 0 on a missing key conflicts with actual = 0', async (store, p) => {
    const error = await rejectsWithCode(store.save(`${p}missing`, 'x', 3), 'CHECKPOINT_CONFLICT');
    assert.ok(CheckpointConflictError.isInstance(error));
    assert.equal(error.expected, 3);
    assert.equal(error.actual, 0);
    assert.equal(await store.load(`${p}missing`), undefined);
  });

  test('an invalid expected version is refused with CHECKPOINT_VERSION_INVALID', async (store, p) => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number]) {
      await rejectsWithCode(store.save(`${p}k`, 'x', bad), 'CHECKPOINT_VERSION_INVALID');
    }
    assert.equal(await store.load(`${p}k`), undefined);
  });

  test('an empty or non-string key is refused with CHECKPOINT_KEY_INVALID', async (store) => {
    await rejectsWithCode(store.save('', 'x', 0), 'CHECKPOINT_KEY_INVALID');
    await rejectsWithCode(store.load(42 as unknown as string), 'CHECKPOINT_KEY_INVALID');
    await rejectsWithCode(store.delete(''), 'CHECKPOINT_KEY_INVALID');
  });
}

/** The conformance cases of compare-and-set under concurrency, and the save time. */
function concurrentSaveCases(test: StoreTest): void {
  test('concurrent saves with the same expected version: exactly one wins', async (store, p) => {
    await store.save(`${p}k`, { n: 0 }, 0);
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => store.save(`${p}k`, { n: i + 1 }, 1)));
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(won.length, 1);
    assert.equal(won[0]?.value, 2);
    assert.equal(lost.length, 7);
    for (const r of lost) assert.ok(CheckpointConflictError.isInstance(r.reason));
    const winner = results.findIndex((r) => r.status === 'fulfilled');
    assert.deepEqual((await store.load(`${p}k`))?.data, { n: winner + 1 });
  });

  test('concurrent creates of one key: exactly one wins', async (store, p) => {
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => store.save(`${p}new`, i, 0)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    assert.equal((await store.load(`${p}new`))?.version, 1);
  });

  test('updatedAt does not go backwards across saves', async (store, p) => {
    await store.save(`${p}k`, 1, 0);
    const first = (await store.load(`${p}k`))?.updatedAt ?? '';
    await store.save(`${p}k`, 2, 1);
    const second = (await store.load(`${p}k`))?.updatedAt ?? '';
    assert.ok(Date.parse(second) >= Date.parse(first), `${second} is before ${first}`);
  });
}

/** The conformance cases of the JSON criterion. */
function jsonCriterionCases(test: StoreTest): void {
  const roundTrips = (title: string, value: unknown): void => {
    test(`round-trips ${title} as JSON.parse(JSON.stringify(value))`, async (store, p) => {
      await store.save(`${p}v`, value, 0);
      assert.deepEqual((await store.load(`${p}v`))?.data, json(value));
    });
  };

  roundTrips('awkward unicode: NUL, lone surrogates, astral, combining, RTL', {
    nul: 'a\u0000b',
    lone: ['\ud800', '\udfff', 'x\ud83dy', '\ude00'],
    emoji: '👩‍👩‍👧‍👦 🇻🇳',
    nfd: 'Thu\u0301c',
    rtl: 'שלום مرحبا',
    controls: '\t\n\r\u0007\u001f\u2028\u2029',
    quotes: '"\'\\`',
    'key:with%odd_chars\\': 'ok',
  });
  roundTrips('nested arrays and objects', {
    a: [[[[[1, [2, [3, [4, [5]]]]]]]]],
    b: [{ c: [{}, [], null, true, false] }],
    deep: nest(200),
  });
  roundTrips('numbers at the edges of double precision', {
    max: Number.MAX_VALUE,
    min: Number.MIN_VALUE,
    maxSafe: Number.MAX_SAFE_INTEGER,
    minSafe: Number.MIN_SAFE_INTEGER,
    beyondSafe: 2 ** 53 + 2,
    epsilon: Number.EPSILON,
    tenth: 0.1 + 0.2,
    negZero: -0,
    tiny: -1e-300,
    big: 1e308,
  });
  roundTrips('undefined properties (they vanish) and undefined array items (they become null)', {
    gone: undefined,
    kept: 1,
    list: [undefined, 1],
  });
  roundTrips('top-level scalars and null', null);
  roundTrips('a top-level string', 'just a string');
  roundTrips('objects with toJSON (dates)', { at: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) });

  test('round-trips a 1 MB document', async (store, p) => {
    const doc = {
      chunks: Array.from({ length: 1024 }, (_, i) => `${String(i).padStart(4, '0')}:${'x'.repeat(1019)}`),
    };
    assert.ok(JSON.stringify(doc).length > 1_000_000);
    await store.save(`${p}big`, doc, 0);
    assert.deepEqual((await store.load(`${p}big`))?.data, doc);
  });

  const rejects = (title: string, make: () => unknown): void => {
    test(`rejects ${title} with CHECKPOINT_DATA_INVALID and writes nothing`, async (store, p) => {
      await store.save(`${p}k`, { good: true }, 0);
      await rejectsWithCode(store.save(`${p}k`, make(), 1), 'CHECKPOINT_DATA_INVALID');
      await rejectsWithCode(store.save(`${p}fresh`, make(), 0), 'CHECKPOINT_DATA_INVALID');
      const loaded = await store.load(`${p}k`);
      assert.equal(loaded?.version, 1);
      assert.deepEqual(loaded.data, { good: true });
      assert.equal(await store.load(`${p}fresh`), undefined);
    });
  };

  rejects('NaN', () => ({ n: Number.NaN }));
  rejects('Infinity', () => ({ list: [1, Number.POSITIVE_INFINITY] }));
  rejects('-Infinity', () => Number.NEGATIVE_INFINITY);
  rejects('a BigInt', () => ({ deep: { n: 10n } }));
  rejects('a function', () => ({ f: () => 1 }));
  rejects('a symbol', () => ({ s: Symbol('s') }));
  rejects('a cycle', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = { back: a };
    return a;
  });
  rejects('undefined data', () => undefined);
}

/** The conformance cases of isolation from the caller. */
function isolationCases(test: StoreTest): void {
  test('mutating an object after saving it never changes what is stored', async (store, p) => {
    const data = { list: [1, 2], nested: { a: 'x' } };
    await store.save(`${p}k`, data, 0);
    data.list.push(3);
    data.nested.a = 'changed';
    assert.deepEqual((await store.load(`${p}k`))?.data, { list: [1, 2], nested: { a: 'x' } });
  });

  test('mutating a loaded object never changes what is stored', async (store, p) => {
    await store.save(`${p}k`, { list: [1] }, 0);
    const first = (await store.load(`${p}k`))?.data as { list: number[] };
    first.list.push(99);
    assert.deepEqual((await store.load(`${p}k`))?.data, { list: [1] });
  });
}

/** The conformance cases of delete and list. */
function deleteAndListCases(test: StoreTest): void {
  test('delete of a missing key resolves', async (store, p) => {
    await store.delete(`${p}never-saved`);
  });

  test('delete removes the checkpoint and a later save starts again at version 0', async (store, p) => {
    await store.save(`${p}k`, 1, 0);
    await store.save(`${p}k`, 2, 1);
    await store.delete(`${p}k`);
    assert.equal(await store.load(`${p}k`), undefined);
    assert.equal(await store.save(`${p}k`, 3, 0), 1);
  });

  test('list(prefix) returns exactly the keys with that literal prefix', async (store, p) => {
    const keys = ['a', 'a:1', 'a:2', 'ab', 'b', 'b:a'].map((k) => `${p}${k}`);
    for (const k of keys) await store.save(k, k, 0);
    assert.deepEqual((await collect(store.list(`${p}a`))).sort(), keys.filter((k) => k.startsWith(`${p}a`)).sort());
    assert.deepEqual((await collect(store.list(`${p}a:`))).sort(), [`${p}a:1`, `${p}a:2`]);
    assert.deepEqual(await collect(store.list(`${p}zzz`)), []);
    const all = await collect(store.list());
    for (const k of keys) assert.ok(all.includes(k), `list() is missing ${k}`);
  });

  test('list(prefix) treats %, _, : and \\ literally (no wildcard leaks)', async (store, p) => {
    const keys = ['100%', '100x', '1000', 'a_b', 'axb', 'a:b', 'a\\b', 'a\\\\b', 'a%b', 'a%%b'].map((k) => `${p}${k}`);
    for (const k of keys) await store.save(k, k, 0);
    const check = async (prefix: string): Promise<void> => {
      const expected = keys.filter((k) => k.startsWith(`${p}${prefix}`)).sort();
      assert.deepEqual(
        (await collect(store.list(`${p}${prefix}`))).sort(),
        expected,
        `prefix ${JSON.stringify(prefix)}`,
      );
    };
    for (const prefix of ['100%', 'a_', 'a%', 'a\\', 'a\\\\', 'a:', '%', '_', '\\']) await check(prefix);
  });

  test('list does not return deleted keys', async (store, p) => {
    await store.save(`${p}x`, 1, 0);
    await store.save(`${p}y`, 1, 0);
    await store.delete(`${p}x`);
    assert.deepEqual(await collect(store.list(p)), [`${p}y`]);
  });
}

/** The conformance cases of close. */
function closeCases(it: ConformanceHarness['it'], factory: CheckpointStoreFactory): void {
  it('close resolves, is idempotent, and later calls reject with CHECKPOINT_STORE_CLOSED', async () => {
    const store = await factory();
    if (store.close === undefined) return;
    const key = `conformance-${randomUUID()}`;
    await store.save(key, 1, 0);
    await store.delete(key);
    await store.close();
    await store.close();
    await rejectsWithCode(store.load('anything'), 'CHECKPOINT_STORE_CLOSED');
    await rejectsWithCode(store.save('anything', 1, 0), 'CHECKPOINT_STORE_CLOSED');
    await rejectsWithCode(store.delete('anything'), 'CHECKPOINT_STORE_CLOSED');
    await rejectsWithCode(collect(store.list()), 'CHECKPOINT_STORE_CLOSED');
    await rejectsWithCode(collect(store.list('conformance-')), 'CHECKPOINT_STORE_CLOSED');
    if (store.history !== undefined)
      await rejectsWithCode(collect(store.history('anything')), 'CHECKPOINT_STORE_CLOSED');
    if (store.loadVersion !== undefined)
      await rejectsWithCode(store.loadVersion('anything', 1), 'CHECKPOINT_STORE_CLOSED');
  });
}

function nest(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { d: value };
  return value;
}
