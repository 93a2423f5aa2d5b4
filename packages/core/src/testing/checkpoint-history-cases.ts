import assert from 'node:assert/strict';
import type { Checkpoint, CheckpointStore } from '../checkpoint-store.js';
import { CheckpointConflictError } from '../errors/checkpoint-conflict-error.js';
import { collect, json, rejectsWithCode, type StoreTest } from './conformance-support.js';

/** A store that implements both optional history methods. */
type HistoryStore = CheckpointStore & Required<Pick<CheckpointStore, 'history' | 'loadVersion'>>;

/** Registers one history case; it passes at once on a store without `history` and `loadVersion`. */
type HistoryTest = (
  title: string,
  fn: (store: HistoryStore, prefix: string) => Promise<void>,
  opts?: { keepVersions?: number },
) => void;

/** Saves `count` versions of `key`, each `{ v: <version> }`; returns the last version. */
async function saveVersions(store: CheckpointStore, key: string, count: number, from = 0): Promise<number> {
  let version = from;
  for (let i = 0; i < count; i++) version = await store.save(key, { v: version + 1 }, version);
  return version;
}

const versionsOf = (checkpoints: readonly Checkpoint[]): number[] => checkpoints.map((c) => c.version);

/** Descending integers from `from` down to `to`, both included. */
const down = (from: number, to: number): number[] => Array.from({ length: from - to + 1 }, (_, i) => from - i);

/**
 * The conformance cases of `history` and `loadVersion`: ordering, pruning to `keepVersions`,
 * `before`/`limit`, `loadVersion`, `delete`, and a gap-free sequence under concurrent saves.
 */
export function historyCases(storeTest: StoreTest): void {
  const test: HistoryTest = (title, fn, opts) => {
    storeTest(
      title,
      async (store, prefix) => {
        if (store.history === undefined || store.loadVersion === undefined) return; // optional methods
        await fn(store as HistoryStore, prefix);
      },
      opts,
    );
  };
  orderAndPruningCases(test);
  beforeAndLimitCases(test);
  loadVersionCases(test);
  deleteAndFailureCases(test);
  concurrencyCases(test);
  badInputCases(test);
}

function orderAndPruningCases(test: HistoryTest): void {
  test('history of a missing key yields nothing', async (store, p) => {
    assert.deepEqual(await collect(store.history(`${p}missing`)), []);
  });

  test('history lists every kept version newest first, the current one included, each as saved', async (store, p) => {
    await saveVersions(store, `${p}k`, 4);
    const listed = await collect(store.history(`${p}k`));
    assert.deepEqual(versionsOf(listed), [4, 3, 2, 1]);
    assert.deepEqual(
      listed.map((c) => c.data),
      [{ v: 4 }, { v: 3 }, { v: 2 }, { v: 1 }],
    );
    assert.deepEqual(listed[0], await store.load(`${p}k`));
    for (let i = 1; i < listed.length; i++) {
      const newer = Date.parse((listed[i - 1] as Checkpoint).updatedAt);
      const older = Date.parse((listed[i] as Checkpoint).updatedAt);
      assert.ok(!Number.isNaN(older) && newer >= older, `updatedAt goes backwards at version ${listed[i]?.version}`);
    }
  });

  test(
    'keeps keepVersions versions before the current one, dropping older ones as it saves',
    async (store, p) => {
      await saveVersions(store, `${p}k`, 2);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`))), [2, 1]);
      await saveVersions(store, `${p}k`, 4, 2);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`))), [6, 5, 4]);
      assert.equal(await store.loadVersion(`${p}k`, 3), undefined);
      assert.equal(await store.loadVersion(`${p}k`, 1), undefined);
      assert.deepEqual((await store.loadVersion(`${p}k`, 4))?.data, { v: 4 });
    },
    { keepVersions: 2 },
  );

  test(
    'keepVersions 0 keeps the current version only',
    async (store, p) => {
      await saveVersions(store, `${p}k`, 3);
      const listed = await collect(store.history(`${p}k`));
      assert.deepEqual(versionsOf(listed), [3]);
      assert.deepEqual(listed[0]?.data, { v: 3 });
      assert.equal(await store.loadVersion(`${p}k`, 2), undefined);
      assert.deepEqual((await store.loadVersion(`${p}k`, 3))?.data, { v: 3 });
    },
    { keepVersions: 0 },
  );

  test(
    "each key has its own history: keys sharing a prefix never see each other's versions",
    async (store, p) => {
      const keys = ['a', 'a:1', 'a%', 'a_', 'ab'].map((k) => `${p}${k}`);
      for (const [i, key] of keys.entries()) {
        for (let v = 0; v <= i; v++) await store.save(key, { key, v: v + 1 }, v);
      }
      for (const [i, key] of keys.entries()) {
        const listed = await collect(store.history(key));
        assert.deepEqual(versionsOf(listed), down(i + 1, 1), key);
        for (const c of listed) assert.deepEqual(c.data, { key, v: c.version });
      }
    },
    { keepVersions: 10 },
  );
}

function beforeAndLimitCases(test: HistoryTest): void {
  test(
    'before lists only lower versions, limit caps the count, and together they page through',
    async (store, p) => {
      await saveVersions(store, `${p}k`, 10);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`, { before: 7 }))), [6, 5, 4, 3, 2, 1]);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`, { limit: 3 }))), [10, 9, 8]);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`, { before: 7, limit: 2 }))), [6, 5]);
      const pages: number[][] = [];
      let before: number | undefined;
      for (;;) {
        const page = await collect(store.history(`${p}k`, before === undefined ? { limit: 4 } : { before, limit: 4 }));
        if (page.length === 0) break;
        pages.push(versionsOf(page));
        before = page[page.length - 1]?.version;
      }
      assert.deepEqual(pages, [
        [10, 9, 8, 7],
        [6, 5, 4, 3],
        [2, 1],
      ]);
    },
    { keepVersions: 20 },
  );

  test(
    'before at or below the oldest kept version yields nothing; above the current one, everything kept',
    async (store, p) => {
      await saveVersions(store, `${p}k`, 5);
      assert.deepEqual(await collect(store.history(`${p}k`, { before: 1 })), []);
      assert.deepEqual(await collect(store.history(`${p}k`, { before: 3 })), []);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`, { before: 4 }))), [3]);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`, { before: 1000 }))), [5, 4, 3]);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`, { limit: 1000 }))), [5, 4, 3]);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`, { limit: 1 }))), [5]);
      assert.deepEqual(versionsOf(await collect(store.history(`${p}k`, {}))), [5, 4, 3]);
    },
    { keepVersions: 2 },
  );
}

function loadVersionCases(test: HistoryTest): void {
  test('loadVersion of a missing key resolves undefined', async (store, p) => {
    assert.equal(await store.loadVersion(`${p}missing`, 1), undefined);
  });

  test(
    'loadVersion reads the current and every kept version, equal to what history lists',
    async (store, p) => {
      await saveVersions(store, `${p}k`, 4);
      for (const listed of await collect(store.history(`${p}k`))) {
        assert.deepEqual(await store.loadVersion(`${p}k`, listed.version), listed);
      }
      assert.deepEqual(await store.loadVersion(`${p}k`, 4), await store.load(`${p}k`));
      assert.equal(await store.loadVersion(`${p}k`, 5), undefined);
      assert.equal(await store.loadVersion(`${p}k`, Number.MAX_SAFE_INTEGER), undefined);
    },
    { keepVersions: 5 },
  );

  test('old versions are fresh copies: mutating one never changes what is stored', async (store, p) => {
    const data = { list: [1, 2] };
    await store.save(`${p}k`, data, 0);
    data.list.push(3);
    await store.save(`${p}k`, { list: ['second'] }, 1);
    const old = (await store.loadVersion(`${p}k`, 1))?.data as { list: unknown[] };
    assert.deepEqual(json(old), { list: [1, 2] });
    old.list.push('changed');
    const listed = (await collect(store.history(`${p}k`)))[1]?.data as { list: unknown[] };
    assert.deepEqual(json(listed), { list: [1, 2] });
    listed.list.length = 0;
    assert.deepEqual((await store.loadVersion(`${p}k`, 1))?.data, { list: [1, 2] });
  });

  test('history and loadVersion keep every top-level field of the data, known or not', async (store, p) => {
    const first = {
      v: 1,
      agentId: 'support',
      strategy: { kind: 'direct' },
      history: [{ role: 'user', content: 'hi' }],
      engine: null,
      cause: { at: '2026-01-02T03:04:05.000Z', signal: { kind: 'user_message', text: 'hi' } },
      pendingApprovals: [{ id: 'a1' }],
      fromANewerRelease: { anything: [1, 'two'] },
    };
    await store.save(`${p}k`, first, 0);
    await store.save(`${p}k`, { ...first, history: [] }, 1);
    assert.deepEqual((await store.loadVersion(`${p}k`, 1))?.data, json(first));
    assert.deepEqual((await collect(store.history(`${p}k`)))[1]?.data, json(first));
  });
}

function deleteAndFailureCases(test: HistoryTest): void {
  test('delete removes the whole history; the key created again starts a new one', async (store, p) => {
    await saveVersions(store, `${p}k`, 3);
    await store.delete(`${p}k`);
    assert.deepEqual(await collect(store.history(`${p}k`)), []);
    for (const v of [1, 2, 3]) assert.equal(await store.loadVersion(`${p}k`, v), undefined);
    assert.equal(await store.save(`${p}k`, { again: true }, 0), 1);
    const listed = await collect(store.history(`${p}k`));
    assert.deepEqual(versionsOf(listed), [1]);
    assert.deepEqual(listed[0]?.data, { again: true });
    await store.save(`${p}k`, { again: 2 }, 1);
    assert.deepEqual(
      (await collect(store.history(`${p}k`))).map((c) => [c.version, c.data]),
      [
        [2, { again: 2 }],
        [1, { again: true }],
      ],
    );
  });

  test('a refused save (a conflict, data that is not JSON) adds nothing to the history', async (store, p) => {
    await saveVersions(store, `${p}k`, 2);
    await rejectsWithCode(store.save(`${p}k`, { stale: true }, 1), 'CHECKPOINT_CONFLICT');
    await rejectsWithCode(store.save(`${p}k`, { n: Number.NaN }, 2), 'CHECKPOINT_DATA_INVALID');
    await rejectsWithCode(store.save(`${p}k`, { ahead: true }, 5), 'CHECKPOINT_CONFLICT');
    const listed = await collect(store.history(`${p}k`));
    assert.deepEqual(
      listed.map((c) => [c.version, c.data]),
      [
        [2, { v: 2 }],
        [1, { v: 1 }],
      ],
    );
  });

  test('deleting one key leaves the history of the others', async (store, p) => {
    await saveVersions(store, `${p}a`, 2);
    await saveVersions(store, `${p}a:1`, 2);
    await store.delete(`${p}a`);
    assert.deepEqual(versionsOf(await collect(store.history(`${p}a:1`))), [2, 1]);
  });
}

function concurrencyCases(test: HistoryTest): void {
  test('of concurrent saves with the same expected version, only the winner enters the history', async (store, p) => {
    await store.save(`${p}k`, { n: 0 }, 0);
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => store.save(`${p}k`, { n: i + 1 }, 1)));
    const winner = results.findIndex((r) => r.status === 'fulfilled');
    const listed = await collect(store.history(`${p}k`));
    assert.deepEqual(
      listed.map((c) => [c.version, c.data]),
      [
        [2, { n: winner + 1 }],
        [1, { n: 0 }],
      ],
    );
  });

  test(
    'concurrent read-modify-write savers leave a gap-free sequence of versions',
    async (store, p) => {
      const writers = 4;
      const each = 5;
      await store.save(`${p}k`, { n: 1, by: [] }, 0);
      const writer = async (w: number): Promise<void> => {
        for (let done = 0; done < each;) {
          const current = await store.load(`${p}k`);
          const data = current?.data as { n: number; by: number[] };
          try {
            await store.save(`${p}k`, { n: data.n + 1, by: [...data.by, w] }, current?.version ?? 0);
            done++;
          } catch (error) {
            if (!CheckpointConflictError.isInstance(error)) throw error;
          }
        }
      };
      await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
      const total = 1 + writers * each;
      const listed = await collect(store.history(`${p}k`));
      assert.deepEqual(versionsOf(listed), down(total, 1));
      for (const c of listed) {
        const data = c.data as { n: number; by: number[] };
        assert.equal(data.n, c.version, `version ${c.version} holds the data of another version`);
        assert.equal(data.by.length, c.version - 1);
      }
      const last = listed[0]?.data as { by: number[] };
      for (let w = 0; w < writers; w++) assert.equal(last.by.filter((x) => x === w).length, each);
    },
    { keepVersions: 30 },
  );
}

function badInputCases(test: HistoryTest): void {
  test('history refuses a bad key with CHECKPOINT_KEY_INVALID', async (store) => {
    await rejectsWithCode(collect(store.history('')), 'CHECKPOINT_KEY_INVALID');
    await rejectsWithCode(collect(store.history(7 as unknown as string)), 'CHECKPOINT_KEY_INVALID');
  });

  test('history refuses bad options with CHECKPOINT_HISTORY_OPTIONS_INVALID', async (store, p) => {
    await saveVersions(store, `${p}k`, 2);
    const bad: unknown[] = [
      { before: 0 },
      { before: -1 },
      { before: 1.5 },
      { before: '3' },
      { before: Number.NaN },
      { limit: 0 },
      { limit: -2 },
      { limit: Number.POSITIVE_INFINITY },
      { limit: '1' },
      { befor: 2 },
      null,
      'before',
      [1],
    ];
    for (const opts of bad) {
      await rejectsWithCode(
        collect(store.history(`${p}k`, opts as { before?: number; limit?: number })),
        'CHECKPOINT_HISTORY_OPTIONS_INVALID',
      );
    }
  });

  test('loadVersion refuses a bad key or version with a typed error', async (store, p) => {
    await saveVersions(store, `${p}k`, 1);
    await rejectsWithCode(store.loadVersion('', 1), 'CHECKPOINT_KEY_INVALID');
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number, undefined]) {
      await rejectsWithCode(store.loadVersion(`${p}k`, bad as number), 'CHECKPOINT_VERSION_INVALID');
    }
  });
}
