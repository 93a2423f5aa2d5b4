import { describe, expect, it } from 'vitest';
import { CheckpointConflictError, MemoryCheckpointStore, type CheckpointStore } from '@signalyard/core';
import { saveAtOnce } from '@signalyard/core/internal';

describe('saveAtOnce', () => {
  it('answers a memory store save at once: the new version, stored as save stores it', async () => {
    const store = new MemoryCheckpointStore();
    expect(saveAtOnce(store, 'k', { n: 1 }, 0)).toBe(1);
    expect(saveAtOnce(store, 'k', { n: 2 }, 1)).toBe(2);
    expect(await store.load('k')).toMatchObject({ version: 2, data: { n: 2 } });
    expect((await store.loadVersion('k', 1))?.data).toEqual({ n: 1 });
  });

  it('rejects as save does when the memory store refuses (a conflict, a closed store): nothing written', async () => {
    const store = new MemoryCheckpointStore();
    await store.save('k', { n: 1 }, 0);
    const conflict = saveAtOnce(store, 'k', { n: 2 }, 0);
    expect(conflict).toBeInstanceOf(Promise);
    await expect(conflict).rejects.toBeInstanceOf(CheckpointConflictError);
    expect((await store.load('k'))?.data).toEqual({ n: 1 });
    await store.close();
    await expect(saveAtOnce(store, 'k', { n: 3 }, 1)).rejects.toMatchObject({ code: 'CHECKPOINT_STORE_CLOSED' });
  });

  it("goes through save when it is not the memory store's own: a subclass, a replaced method, another store", async () => {
    const calls: string[] = [];
    class Counting extends MemoryCheckpointStore {
      override save(key: string, data: unknown, expectedVersion: number): Promise<number> {
        calls.push(`subclass ${key}`);
        return super.save(key, data, expectedVersion);
      }
    }
    const sub = new Counting();
    const saved = saveAtOnce(sub, 'a', { n: 1 }, 0);
    expect(saved).toBeInstanceOf(Promise);
    expect(await saved).toBe(1);

    const replaced = new MemoryCheckpointStore();
    const own = replaced.save.bind(replaced);
    replaced.save = (key, data, expectedVersion) => {
      calls.push(`replaced ${key}`);
      return own(key, data, expectedVersion);
    };
    expect(await saveAtOnce(replaced, 'b', { n: 1 }, 0)).toBe(1);

    const inner = new MemoryCheckpointStore();
    const other: CheckpointStore = {
      load: (key) => inner.load(key),
      save: (key, data, expectedVersion) => {
        calls.push(`other ${key}`);
        return inner.save(key, data, expectedVersion);
      },
      delete: (key) => inner.delete(key),
      list: (prefix) => inner.list(prefix),
    };
    expect(await saveAtOnce(other, 'c', { n: 1 }, 0)).toBe(1);
    expect(calls).toEqual(['subclass a', 'replaced b', 'other c']);
  });
});
