import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CheckpointConflictError,
  CheckpointDataError,
  ConfigError,
  MemoryCheckpointStore,
  type CheckpointStore,
  type MemoryCheckpointStoreOptions,
} from '@signalyard/core';
import { checkpointStoreConformance } from '@signalyard/core/testing';
import { thrown } from '@signalyard/test-utils';
import { collect, rejectsCode, rejection } from './helpers.js';

checkpointStoreConformance(
  'MemoryCheckpointStore',
  (opts) => new MemoryCheckpointStore(opts),
  { describe, it },
  { clock: true },
);

// A store without the optional history methods passes everything else.
checkpointStoreConformance(
  'a store without history',
  (): CheckpointStore => {
    const inner = new MemoryCheckpointStore();
    return {
      load: (key) => inner.load(key),
      save: (key, data, expected) => inner.save(key, data, expected),
      delete: (key) => inner.delete(key),
      list: (prefix) => inner.list(prefix),
      close: () => inner.close(),
    };
  },
  { describe, it },
);

describe('MemoryCheckpointStore', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  describe('list', () => {
    it('lists keys in ascending order, whatever the save order', async () => {
      const store = new MemoryCheckpointStore();
      for (const key of ['b', 'a:2', 'c', 'a', 'a:10', 'a:1']) await store.save(key, 1, 0);
      expect(await collect(store.list())).toEqual(['a', 'a:1', 'a:10', 'a:2', 'b', 'c']);
      expect(await collect(store.list('a:'))).toEqual(['a:1', 'a:10', 'a:2']);
    });

    it('orders by UTF-16 code unit, not by locale or code point', async () => {
      const store = new MemoryCheckpointStore();
      // '\uffff' sorts after the surrogate pair of '😀' by code unit, before it by code point.
      const keys = ['\uffff', '😀', 'é', 'Z', 'a', 'B'];
      for (const key of keys) await store.save(key, 1, 0);
      expect(await collect(store.list())).toEqual(['B', 'Z', 'a', 'é', '😀', '\uffff']);
    });

    it('list() and list(undefined) list every key', async () => {
      const store = new MemoryCheckpointStore();
      await store.save('x', 1, 0);
      await store.save('y', 1, 0);
      expect(await collect(store.list())).toEqual(['x', 'y']);
      expect(await collect(store.list(undefined))).toEqual(['x', 'y']);
      expect(await collect(store.list(''))).toEqual(['x', 'y']);
    });

    it('an empty store lists nothing', async () => {
      expect(await collect(new MemoryCheckpointStore().list())).toEqual([]);
    });

    it('lists the keys as they were when iteration began, even while they are deleted', async () => {
      const store = new MemoryCheckpointStore();
      for (const key of ['s:1', 's:2', 's:3', 's:4']) await store.save(key, 1, 0);
      const seen: string[] = [];
      for await (const key of store.list('s:')) {
        seen.push(key);
        await store.delete(key);
        if (key === 's:1') await store.delete('s:3');
      }
      expect(seen).toEqual(['s:1', 's:2', 's:3', 's:4']);
      expect(await collect(store.list())).toEqual([]);
    });

    it('keys saved during an iteration do not appear in it', async () => {
      const store = new MemoryCheckpointStore();
      await store.save('k:1', 1, 0);
      await store.save('k:3', 1, 0);
      const seen: string[] = [];
      for await (const key of store.list('k:')) {
        seen.push(key);
        if (key === 'k:1') await store.save('k:2', 1, 0);
      }
      expect(seen).toEqual(['k:1', 'k:3']);
      expect(await collect(store.list('k:'))).toEqual(['k:1', 'k:2', 'k:3']);
    });

    it.each<[string, unknown]>([
      ['a number', 42],
      ['null', null],
      ['an object', { prefix: 'a' }],
    ])('list with %s as prefix rejects with CHECKPOINT_KEY_INVALID', async (_title, prefix) => {
      const store = new MemoryCheckpointStore();
      await store.save('a', 1, 0);
      await rejectsCode(collect(store.list(prefix as string)), 'CHECKPOINT_KEY_INVALID');
    });
  });

  describe('save and load', () => {
    it('updatedAt is the ISO-8601 time of the save', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const store = new MemoryCheckpointStore();
      vi.setSystemTime(new Date('2026-03-04T05:06:07.890Z'));
      await store.save('k', 1, 0);
      vi.setSystemTime(new Date('2026-03-04T06:00:00.000Z'));
      expect((await store.load('k'))?.updatedAt).toBe('2026-03-04T05:06:07.890Z');
      await store.save('k', 2, 1);
      expect((await store.load('k'))?.updatedAt).toBe('2026-03-04T06:00:00.000Z');
    });

    it('each load returns a fresh copy of the data', async () => {
      const store = new MemoryCheckpointStore();
      await store.save('k', { list: [1] }, 0);
      const first = await store.load('k');
      const second = await store.load('k');
      expect(first?.data).toEqual(second?.data);
      expect(first?.data).not.toBe(second?.data);
    });

    it('two stores never share checkpoints', async () => {
      const one = new MemoryCheckpointStore();
      const two = new MemoryCheckpointStore();
      await one.save('k', 'one', 0);
      expect(await two.load('k')).toBeUndefined();
      expect(await two.save('k', 'two', 0)).toBe(1);
      expect((await one.load('k'))?.data).toBe('one');
    });

    it('keys are independent of one another', async () => {
      const store = new MemoryCheckpointStore();
      await store.save('a', 'a1', 0);
      await store.save('a', 'a2', 1);
      expect(await store.save('b', 'b1', 0)).toBe(1);
      await store.delete('b');
      expect(await store.load('a')).toMatchObject({ version: 2, data: 'a2' });
    });

    it('a refused save reports the key and path, and keeps the stored checkpoint', async () => {
      const store = new MemoryCheckpointStore();
      await store.save('sess:1', { ok: true }, 0);
      const error = await rejection(store.save('sess:1', { history: [1, Number.NaN] }, 1));
      expect(CheckpointDataError.isInstance(error)).toBe(true);
      expect((error as CheckpointDataError).path).toBe('$.history[1]');
      expect((error as CheckpointDataError).message).toContain('"sess:1"');
      expect(await store.load('sess:1')).toMatchObject({ version: 1, data: { ok: true } });
    });

    it('a conflict names the key and both versions', async () => {
      const store = new MemoryCheckpointStore();
      await store.save('k', 1, 0);
      const error = await rejection(store.save('k', 2, 5));
      expect(CheckpointConflictError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ key: 'k', expected: 5, actual: 1 });
    });

    it('bad input is reported as a rejected promise, never a synchronous throw', async () => {
      const store = new MemoryCheckpointStore();
      let pending: Promise<unknown>[] = [];
      expect(() => {
        pending = [
          store.save('', 1, 0),
          store.save('k', 1, -1),
          store.save('k', Number.NaN, 0),
          store.load(''),
          store.delete(''),
        ];
      }).not.toThrow();
      const codes = await Promise.all(pending.map(async (p) => ((await rejection(p)) as { code: string }).code));
      expect(codes).toEqual([
        'CHECKPOINT_KEY_INVALID',
        'CHECKPOINT_VERSION_INVALID',
        'CHECKPOINT_DATA_INVALID',
        'CHECKPOINT_KEY_INVALID',
        'CHECKPOINT_KEY_INVALID',
      ]);
    });
  });

  describe('history', () => {
    const versions = async (store: MemoryCheckpointStore, key: string): Promise<number[]> =>
      (await collect(store.history(key))).map((c) => c.version);

    it('keeps 20 versions before the current one by default', async () => {
      const store = new MemoryCheckpointStore();
      for (let v = 0; v < 25; v++) await store.save('k', { v: v + 1 }, v);
      const listed = await versions(store, 'k');
      expect(listed).toHaveLength(21);
      expect(listed[0]).toBe(25);
      expect(listed.at(-1)).toBe(5);
      expect(await store.loadVersion('k', 4)).toBeUndefined();
      expect((await store.loadVersion('k', 5))?.data).toEqual({ v: 5 });
    });

    it('each listed version has the time it was saved', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const store = new MemoryCheckpointStore();
      vi.setSystemTime(new Date('2026-03-04T05:06:07.890Z'));
      await store.save('k', 1, 0);
      vi.setSystemTime(new Date('2026-03-04T06:00:00.000Z'));
      await store.save('k', 2, 1);
      expect((await collect(store.history('k'))).map((c) => c.updatedAt)).toEqual([
        '2026-03-04T06:00:00.000Z',
        '2026-03-04T05:06:07.890Z',
      ]);
    });

    it('lists the versions kept when iteration began, even while saves prune them', async () => {
      const store = new MemoryCheckpointStore({ keepVersions: 2 });
      for (let v = 0; v < 3; v++) await store.save('k', v + 1, v);
      const seen: number[] = [];
      for await (const c of store.history('k')) {
        seen.push(c.version);
        if (c.version === 3) for (let v = 3; v < 6; v++) await store.save('k', v + 1, v);
      }
      expect(seen).toEqual([3, 2, 1]);
      expect(await versions(store, 'k')).toEqual([6, 5, 4]);
    });

    it('bad history options are reported when iteration starts, as a rejection', async () => {
      const store = new MemoryCheckpointStore();
      const iterable = store.history('k', { limit: 0 });
      const error = await rejectsCode(collect(iterable), 'CHECKPOINT_HISTORY_OPTIONS_INVALID');
      expect(error.message).toContain('limit 0');
      const unknown = await rejectsCode(
        collect(store.history('k', { befor: 3 } as { before?: number })),
        'CHECKPOINT_HISTORY_OPTIONS_INVALID',
      );
      expect(unknown.message).toContain('"befor"');
      expect((await rejectsCode(store.loadVersion('k', 0), 'CHECKPOINT_VERSION_INVALID')).message).toContain('0');
    });

    it('a key deleted after its kept versions wrapped around starts again from version 1, its old versions gone', async () => {
      const store = new MemoryCheckpointStore({ keepVersions: 2 });
      for (let v = 0; v < 7; v++) await store.save('k', { v: v + 1 }, v);
      await store.delete('k');
      await store.save('k', { again: 1 }, 0);
      await store.save('k', { again: 2 }, 1);
      expect(await versions(store, 'k')).toEqual([2, 1]);
      expect((await store.loadVersion('k', 1))?.data).toEqual({ again: 1 });
      expect(await store.loadVersion('k', 3)).toBeUndefined();
      expect((await store.load('k'))?.data).toEqual({ again: 2 });
    });

    it('for any keepVersions and number of saves, history is the last keepVersions + 1 versions', async () => {
      await fc.assert(
        fc.asyncProperty(fc.nat(6), fc.integer({ min: 1, max: 15 }), async (keepVersions, saves) => {
          const store = new MemoryCheckpointStore({ keepVersions });
          for (let v = 0; v < saves; v++) await store.save('k', { v: v + 1 }, v);
          const kept = Math.min(saves, keepVersions + 1);
          const expected = Array.from({ length: kept }, (_, i) => saves - i);
          expect(await versions(store, 'k')).toEqual(expected);
          for (let v = 1; v <= saves; v++) {
            const loaded = await store.loadVersion('k', v);
            expect(loaded?.data).toEqual(expected.includes(v) ? { v } : undefined);
          }
        }),
        { numRuns: 100 },
      );
    });
  });

  describe('options', () => {
    it('accepts keepVersions 0 and large values, and an explicit undefined as the default', async () => {
      for (const keepVersions of [0, 1, 1000, undefined]) {
        const store = new MemoryCheckpointStore({ keepVersions });
        expect(await store.save('k', 1, 0)).toBe(1);
      }
    });

    it('refuses a bad keepVersions and unknown options with one ConfigError listing each problem', () => {
      const error = thrown(
        () => new MemoryCheckpointStore({ keepVersions: -1, keep: 3 } as unknown as MemoryCheckpointStoreOptions),
      );
      expect(ConfigError.isInstance(error)).toBe(true);
      const problems = (error as ConfigError).problems;
      expect(problems.map((p) => p.path)).toEqual(['keepVersions', 'keep']);
      expect(problems[0]?.message).toContain('-1');
      expect(problems[1]?.message).toContain('unknown option "keep"');
    });

    it.each<[string, unknown]>([
      ['a fraction', 1.5],
      ['a string', '20'],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['NaN', Number.NaN],
      ['null', null],
    ])('refuses %s as keepVersions with CONFIG_INVALID', (_title, keepVersions) => {
      const error = thrown(() => new MemoryCheckpointStore({ keepVersions } as MemoryCheckpointStoreOptions));
      expect(ConfigError.isInstance(error)).toBe(true);
      expect((error as ConfigError).problems.map((p) => p.path)).toEqual(['keepVersions']);
    });

    it.each<[string, unknown]>([
      ['null', null],
      ['a function', () => 0],
      ['an object without now()', { time: 0 }],
      ['now that is not a function', { now: 5 }],
    ])('refuses %s as the clock with CONFIG_INVALID at "clock", listed with the other problems', (_title, clock) => {
      const error = thrown(
        () => new MemoryCheckpointStore({ clock, keepVersions: -1 } as unknown as MemoryCheckpointStoreOptions),
      );
      expect(ConfigError.isInstance(error)).toBe(true);
      const problems = (error as ConfigError).problems;
      expect(problems.map((p) => p.path)).toEqual(['keepVersions', 'clock']);
      expect(problems[1]?.message).toContain('expected a Clock { now(): number }');
    });

    it('reads the time of each save from its clock only (a fake clock, no fake timers)', async () => {
      let now = Date.UTC(2030, 5, 1);
      const store = new MemoryCheckpointStore({ clock: { now: () => now } });
      await store.save('k', 1, 0);
      now += 1;
      await store.save('k', 2, 1);
      expect((await collect(store.history('k'))).map((c) => c.updatedAt)).toEqual([
        '2030-06-01T00:00:00.001Z',
        '2030-06-01T00:00:00.000Z',
      ]);
    });

    it('a clock whose now() returns no time fails the save with CLOCK_INVALID and writes nothing', async () => {
      const store = new MemoryCheckpointStore({ clock: { now: () => Number.NaN } });
      await rejectsCode(store.save('k', 1, 0), 'CLOCK_INVALID');
      expect(await store.load('k')).toBeUndefined();
    });

    it.each<[string, unknown]>([
      ['null', null],
      ['a number', 20],
      ['an array', []],
    ])('refuses %s as options with CONFIG_INVALID', (_title, options) => {
      const error = thrown(() => new MemoryCheckpointStore(options as MemoryCheckpointStoreOptions));
      expect(ConfigError.isInstance(error)).toBe(true);
      expect((error as ConfigError).problems[0]?.path).toBe('');
    });
  });

  describe('after close', () => {
    async function closed(): Promise<MemoryCheckpointStore> {
      const store = new MemoryCheckpointStore();
      await store.save('k', 1, 0);
      await store.close();
      return store;
    }

    it('load rejects with CHECKPOINT_STORE_CLOSED naming the store', async () => {
      const error = await rejectsCode((await closed()).load('k'), 'CHECKPOINT_STORE_CLOSED');
      expect(error.message).toContain('MemoryCheckpointStore');
    });

    it('save rejects with CHECKPOINT_STORE_CLOSED', async () => {
      await rejectsCode((await closed()).save('k', 2, 1), 'CHECKPOINT_STORE_CLOSED');
    });

    it('delete rejects with CHECKPOINT_STORE_CLOSED', async () => {
      await rejectsCode((await closed()).delete('k'), 'CHECKPOINT_STORE_CLOSED');
    });

    it('list rejects with CHECKPOINT_STORE_CLOSED', async () => {
      await rejectsCode(collect((await closed()).list()), 'CHECKPOINT_STORE_CLOSED');
    });

    it('history and loadVersion reject with CHECKPOINT_STORE_CLOSED', async () => {
      const store = await closed();
      await rejectsCode(collect(store.history('k')), 'CHECKPOINT_STORE_CLOSED');
      await rejectsCode(store.loadVersion('k', 1), 'CHECKPOINT_STORE_CLOSED');
    });

    it('close again resolves', async () => {
      await expect((await closed()).close()).resolves.toBeUndefined();
    });
  });

  describe('properties', () => {
    it('for any JSON value, a save then load gives back JSON.parse(JSON.stringify(value))', async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue(), async (value) => {
          const store = new MemoryCheckpointStore();
          expect(await store.save('k', value, 0)).toBe(1);
          const loaded = await store.load('k');
          expect(loaded?.version).toBe(1);
          expect(loaded?.data).toStrictEqual(JSON.parse(JSON.stringify(value)));
        }),
      );
    });

    it('for anything, a save either round-trips as JSON or is refused with CHECKPOINT_DATA_INVALID and writes nothing', async () => {
      await fc.assert(
        fc.asyncProperty(fc.anything({ withBigInt: true, withDate: true, withSparseArray: true }), async (value) => {
          const store = new MemoryCheckpointStore();
          await store.save('k', 'before', 0);
          let version: number;
          try {
            version = await store.save('k', value, 1);
          } catch (error) {
            expect(CheckpointDataError.isInstance(error), `threw ${String(error)}`).toBe(true);
            expect(await store.load('k')).toMatchObject({ version: 1, data: 'before' });
            return;
          }
          expect(version).toBe(2);
          expect((await store.load('k'))?.data).toStrictEqual(JSON.parse(JSON.stringify(value)));
        }),
        { numRuns: 200 },
      );
    });
  });
});
