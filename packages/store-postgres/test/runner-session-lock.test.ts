// A Runner with a PostgresSessionLock on the real server: what happens to a turn when its lock
// connection is lost, and when the lock cannot be taken in time.
import { AbortedError, SignalKind, signal, type ChatMessage } from '@signalyard/core';
import { PostgresCheckpointStore, PostgresLockError, PostgresSessionLock } from '@signalyard/store-postgres';
import { deferred } from '@signalyard/test-utils';
import { RunnerError, createRunner, type Runner, type SessionCheckpointV1, type TurnContext } from 'signalyard';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';

/** Generous bound for conditions that depend on the server (a busy CI machine). */
const WAIT = { timeout: 20_000, interval: 5 };

const tables = new Set<string>();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

/** A migrated store on a fresh table, closed after the test. */
async function migratedStore(): Promise<PostgresCheckpointStore> {
  const table = uniqueTable('runlock');
  tables.add(table);
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
  open.push(store);
  await store.migrate();
  return store;
}

/** A lock closed after the test. */
function lock(options: ConstructorParameters<typeof PostgresSessionLock>[0]): PostgresSessionLock {
  const l = new PostgresSessionLock(options);
  open.push(l);
  return l;
}

/** A runner closed after the test (before its lock and store). */
function runner(r: Runner): Runner {
  open.push(r);
  return r;
}

let keyCount = 0;
const freshKey = (): string => `agent:main:runner-lock-${process.pid}-${Date.now()}-${++keyCount}`;

/** The backend pids holding the advisory lock of `key`. */
async function holders(key: string): Promise<number[]> {
  const { rows } = await adminPool().query<{ pid: number }>(
    `SELECT pid FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 1
        AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
    [key],
  );
  return rows.map((r) => r.pid);
}

/** Resolves when `abortSignal` fires (at once if it has). */
function aborted(abortSignal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (abortSignal.aborted) resolve();
    else abortSignal.addEventListener('abort', () => resolve(), { once: true });
  });
}

describePostgres('a Runner with a PostgresSessionLock', () => {
  it('aborts a turn whose lock connection is terminated: failed with SESSION_LOCK_FAILED, its effects discarded, and another runner serves the session', async () => {
    const store = await migratedStore();
    const key = freshKey();
    const started = deferred();
    const aborts: unknown[] = [];
    const engineA = async (ctx: TurnContext) => {
      if (ctx.signal.payload !== 'to A')
        return { messages: [{ role: 'assistant', content: 'A again' } satisfies ChatMessage] };
      started.resolve();
      await aborted(ctx.abortSignal);
      aborts.push(ctx.abortSignal.reason);
      // An engine that ignores the abort and answers anyway: the answer must not be kept.
      return { messages: [{ role: 'assistant', content: 'effect of A' } satisfies ChatMessage] };
    };
    const engineB = async (ctx: TurnContext) => ({
      messages: [{ role: 'assistant', content: `B answers ${String(ctx.signal.payload)}` } satisfies ChatMessage],
    });
    const lockA = lock({ connectionString: DATABASE_URL });
    const lockB = lock({ connectionString: DATABASE_URL, retryMinMs: 1, retryMaxMs: 20 });
    const runnerA = runner(createRunner({ agents: [{ id: 'main', engine: engineA }], store, lock: lockA }));
    const runnerB = runner(createRunner({ agents: [{ id: 'main', engine: engineB }], store, lock: lockB }));

    const outcomeA = runnerA.dispatch(key, signal(SignalKind.UserMessage, 'to A'));
    await started.promise;
    const [pid] = await holders(key);
    expect(pid).toBeTypeOf('number');
    const outcomeB = runnerB.dispatch(key, signal(SignalKind.UserMessage, 'to B'));
    await adminPool().query('SELECT pg_terminate_backend($1)', [pid]);

    const a = await outcomeA;
    expect(a.status).toBe('failed');
    expect(RunnerError.isInstance(a.error)).toBe(true);
    expect(a.error?.code).toBe('SESSION_LOCK_FAILED');
    expect(a.error?.message).toContain(JSON.stringify(key));
    const cause = a.error?.cause;
    expect(PostgresLockError.isInstance(cause)).toBe(true);
    expect(cause).toMatchObject({ code: 'POSTGRES_LOCK_LOST', key, pgCode: '57P01' });
    // The engine was told to stop, because of the lost lock.
    expect(aborts.length).toBeGreaterThanOrEqual(1);
    expect(AbortedError.isInstance(aborts[0])).toBe(true);
    expect((aborts[0] as Error).cause).toBe(cause);

    const b = await outcomeB;
    expect(b.status).toBe('completed');
    const history = ((await store.load(key))?.data as SessionCheckpointV1).history;
    expect(history).toContainEqual({ role: 'assistant', content: 'B answers to B' });
    expect(history).not.toContainEqual({ role: 'assistant', content: 'effect of A' });
    // A wrote nothing after losing the lock: not even its arrival (B may own the session now).
    expect(history).not.toContainEqual({ role: 'user', content: 'to A' });

    // Runner A goes on serving the session with a new lock connection.
    await vi.waitFor(async () => expect(await holders(key)).toEqual([]), WAIT);
    expect((await runnerA.dispatch(key, signal(SignalKind.UserMessage, 'later'))).status).toBe('completed');
  });

  it('a lock not taken within acquireTimeoutMs fails the signal with SESSION_LOCK_FAILED (cause POSTGRES_LOCK_TIMEOUT); the engine never runs', async () => {
    const store = await migratedStore();
    const key = freshKey();
    const holder = lock({ connectionString: DATABASE_URL });
    const release = deferred();
    let holding = false;
    const held = holder.withLock(key, async () => {
      holding = true;
      await release.promise;
    });
    await vi.waitFor(() => expect(holding).toBe(true), WAIT);
    const engine = vi.fn(async () => ({}));
    const short = lock({ connectionString: DATABASE_URL, acquireTimeoutMs: 50, retryMinMs: 1, retryMaxMs: 10 });
    const r = runner(createRunner({ agents: [{ id: 'main', engine }], store, lock: short }));
    const outcome = await r.dispatch(key, signal(SignalKind.UserMessage, 'hello'));
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('SESSION_LOCK_FAILED');
    expect(outcome.error?.cause).toMatchObject({ code: 'POSTGRES_LOCK_TIMEOUT', key });
    expect(engine).not.toHaveBeenCalled();
    release.resolve();
    await held;
    expect((await r.dispatch(key, signal(SignalKind.UserMessage, 'again'))).status).toBe('completed');
  });
});
