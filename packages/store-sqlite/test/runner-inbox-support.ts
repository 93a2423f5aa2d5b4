// What the tests of a Runner over a durable inbox share (runner-inbox.test.ts and
// runner-inbox-windows.test.ts): one storage per test — MemoryInbox + MemoryCheckpointStore, or
// SqliteInbox + SqliteCheckpointStore over one temp file with fresh handles for each runner, as
// another process would open it — runners on it, and what a test reads back from the store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MemoryCheckpointStore,
  MemoryInbox,
  signal,
  type CheckpointStore,
  type Inbox,
  type SessionCheckpointV1,
} from '@signalyard/core';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { createRunner, type AgentDefinition, type EngineFn, type Runner, type RunnerOptions } from 'signalyard';
import { afterAll, afterEach } from 'vitest';

/** The session key the tests use. */
export const KEY = 'agent:main:main';

/** A user message from the CLI channel. */
export const user = (text: string) => signal('user_message', { channel: 'cli', text });

/** A test's shared storage: one inbox and one store, with fresh handles for each extra runner (SQLite). */
export interface Storage {
  readonly name: string;
  inbox(): Inbox;
  store(): CheckpointStore;
}

/** A runner on a storage, with the inbox and store handles it was given. */
export interface RunnerOn {
  readonly runner: Runner;
  readonly inbox: Inbox;
  readonly store: CheckpointStore;
}

/** The storages and runners of one test file (see {@link runnerInboxFile}). */
export interface RunnerInboxFile {
  /** MemoryInbox + MemoryCheckpointStore (the same handles for every runner). */
  readonly memory: () => Storage;
  /** SqliteInbox + SqliteCheckpointStore over a new file of the test file's temp dir (fresh handles each time). */
  readonly sqlite: () => Storage;
  /** A path for a new database file in the test file's temp dir. */
  readonly path: (prefix: string) => string;
  /** Closes `close`'s target after the test (in reverse order of tracking, failures ignored). */
  readonly track: (close: () => Promise<unknown>) => void;
  /** A worker runner on `storage` (`pollMs` 20, `leaseMs` 2,000), closed after the test; `extra` overrides. */
  readonly runnerOn: (storage: Storage, engine: EngineFn, extra?: Partial<RunnerOptions>) => RunnerOn;
  /**
   * A worker runner (id `dying`) over `inbox` — a storage's inbox a test makes die — with short
   * leases (150 ms), so that the next worker takes its keys over soon; closed after the test.
   */
  readonly dyingWorker: (storage: Storage, inbox: Inbox, agent: AgentDefinition) => Runner;
}

/**
 * Sets up one test file's storages: a temp dir (removed after the file) and the runners, inboxes
 * and stores its tests make (closed after each test). Call it at the file's top level: it
 * registers `afterEach` and `afterAll` there, and keeps nothing between files (vitest runs
 * files without isolation).
 */
export function runnerInboxFile(dirPrefix: string): RunnerInboxFile {
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  let files = 0;
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const track = (close: () => Promise<unknown>): void => {
    closers.push(close);
  };
  const path = (prefix: string): string => join(dir, `${prefix}-${String(files++)}.db`);
  const workerRunner = (options: RunnerOptions): Runner => {
    const runner = createRunner({ closeTimeoutMs: 50, ...options });
    track(() => runner.close());
    return runner;
  };
  return {
    memory: () => {
      const inbox = new MemoryInbox();
      const store = new MemoryCheckpointStore();
      track(() => inbox.close());
      return { name: 'memory', inbox: () => inbox, store: () => store };
    },
    sqlite: () => {
      const file = path('runner-inbox');
      return {
        name: 'sqlite',
        inbox: () => {
          const inbox = new SqliteInbox({ path: file, pollMs: 20 });
          track(() => inbox.close());
          return inbox;
        },
        store: () => {
          const store = new SqliteCheckpointStore({ path: file });
          track(() => store.close());
          return store;
        },
      };
    },
    path,
    track,
    runnerOn: (storage, engine, extra = {}) => {
      const inbox = storage.inbox();
      const store = storage.store();
      const runner = workerRunner({
        agents: [{ id: 'main', engine }],
        store,
        inbox,
        worker: { pollMs: 20, leaseMs: 2000 },
        ...extra,
      });
      return { runner, inbox, store };
    },
    dyingWorker: (storage, inbox, agent) =>
      workerRunner({
        agents: [agent],
        store: storage.store(),
        inbox,
        worker: { id: 'dying', pollMs: 20, leaseMs: 150 },
      }),
  };
}

/** The stored history of `key` as `role:content` lines. */
export async function historyOf(store: CheckpointStore, key = KEY): Promise<string[]> {
  const data = (await store.load(key))?.data as SessionCheckpointV1 | undefined;
  return (data?.history ?? []).map((m) => `${m.role}:${m.content}`);
}

/** The stored checkpoint's `inboxSeq` of `key` (the last entry it settled). */
export async function inboxSeqOf(store: CheckpointStore, key = KEY): Promise<unknown> {
  return ((await store.load(key))?.data as { inboxSeq?: unknown } | undefined)?.inboxSeq;
}
