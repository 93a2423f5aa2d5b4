// Scale-out (persistence.md): several real runner PROCESSES serve the same sessions at once
// against one database, each with a pool of at most 5 connections plus its PostgresSessionLock
// connection. Afterwards every session's history holds every signal exactly once, each process's
// signals in the order that process sent them. And a process killed with SIGKILL while holding
// session locks: the others take those sessions over within a bounded time.
import { fileURLToPath } from 'node:url';
import type { ChatMessage } from '@signalyard/core';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import type { SessionCheckpointV1 } from 'signalyard';
import { afterAll, afterEach, expect, it } from 'vitest';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { IpcChild, within } from '@signalyard/test-utils/ipc-child';
import { keyOf, textOf, type ChildReply, type ChildRequestBody } from './fixtures/runner-protocol.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/runner-child.ts', import.meta.url));

/** Generous: a cold start compiles the TypeScript sources of every package with tsx. */
const START_DEADLINE_MS = 90_000;
/** 4 processes × 50 sessions × 20 signals on a slow, shared CI machine. */
const RUN_DEADLINE_MS = 240_000;
const STEP_DEADLINE_MS = 30_000;

const tables = new Set<string>();
const children = new Set<IpcChild>();
afterEach(() => {
  for (const child of children) child.kill();
  children.clear();
});
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

/** The children's stderr, for a step that timed out. */
const stderr = (): string =>
  [...children]
    .map((c) => c.stderr)
    .filter((s) => s !== '')
    .join('\n---\n');
/** Rejects with a message (and the children's stderr, after killing them) when `promise` does not settle within `ms`. */
const deadline = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  within(promise, ms, what, stderr, () => {
    for (const child of children) child.kill();
  });

/** Closes `child` (a runner process): it exits with code 0. */
async function close(child: IpcChild): Promise<void> {
  const exit = await child.close(STEP_DEADLINE_MS);
  expect(exit.code, child.stderr).toBe(0);
  children.delete(child);
}

/** Sends `request` to the runner process `child` and resolves with its reply. */
const ask = <R extends ChildReply>(child: IpcChild, request: ChildRequestBody): Promise<R> => child.request<R>(request);

async function startChildren(table: string, n: number): Promise<IpcChild[]> {
  const started = Array.from({ length: n }, () => new IpcChild(childScript, [DATABASE_URL, table], packageDir));
  for (const child of started) children.add(child);
  await deadline(Promise.all(started.map((c) => c.ready)), START_DEADLINE_MS, `${n} runner processes to start`);
  return started;
}

async function migratedTable(label: string): Promise<PostgresCheckpointStore> {
  const table = uniqueTable(label);
  tables.add(table);
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
  await store.migrate();
  return store;
}

/** The pids holding the advisory lock of each key (the session lock's scheme). */
async function lockHolders(keys: readonly string[]): Promise<number[]> {
  const { rows } = await adminPool().query<{ pid: number }>(
    `SELECT pid FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 1
        AND ((classid::bigint << 32) | objid::bigint) = ANY (SELECT hashtextextended(k, 0) FROM unnest($1::text[]) AS k)`,
    [keys],
  );
  return rows.map((r) => r.pid);
}

describePostgres('scale-out: many runner processes on one database', () => {
  it("4 processes × 50 sessions × 20 signals each, at once: every signal exactly once per session, each process's in its order, none failed", async () => {
    const PROCESSES = 4;
    const SESSIONS = Array.from({ length: 50 }, (_, i) => `s${i}`);
    const SIGNALS = 20;
    const store = await migratedTable('scaleout');
    try {
      const runners = await startChildren(store.table, PROCESSES);
      const started = Date.now();
      // All four get their work at once; each enqueues its 1,000 signals immediately.
      const runs = await deadline(
        Promise.all(
          runners.map((child, p) =>
            ask<Extract<ChildReply, { type: 'ran' }>>(child, {
              type: 'run',
              label: `p${p}`,
              sessions: SESSIONS,
              signals: SIGNALS,
            }),
          ),
        ),
        RUN_DEADLINE_MS,
        `${PROCESSES} × ${SESSIONS.length} × ${SIGNALS} signals`,
      );
      const seconds = (Date.now() - started) / 1000;
      for (const run of runs) {
        expect(run.errors).toEqual([]);
        expect(run.statuses).toEqual({ completed: SESSIONS.length * SIGNALS });
      }
      await Promise.all(runners.map(close));

      for (const session of SESSIONS) {
        const checkpoint = await store.load(keyOf(session));
        const data = checkpoint?.data as SessionCheckpointV1 | undefined;
        const label = `session ${session}`;
        expect(data?.v, label).toBe(1);
        expect(checkpoint?.version, `${label}: one save per applied signal`).toBe(PROCESSES * SIGNALS);
        const history = data?.history ?? [];
        // Each turn's two messages are saved together: user, then its own acknowledgement.
        expect(history, label).toHaveLength(2 * PROCESSES * SIGNALS);
        const users: string[] = [];
        history.forEach((message: ChatMessage, i) => {
          if (i % 2 === 0) {
            expect(message.role, label).toBe('user');
            users.push(message.content);
          } else {
            expect(message, label).toEqual({ role: 'assistant', content: `ack ${history[i - 1]?.content ?? ''}` });
          }
        });
        // Every signal exactly once…
        const expected = Array.from({ length: PROCESSES }, (_, p) =>
          Array.from({ length: SIGNALS }, (_, i) => textOf(`p${p}`, session, i)),
        ).flat();
        expect([...users].sort(), label).toEqual([...expected].sort());
        // …and each process's in the order it sent them.
        for (let p = 0; p < PROCESSES; p++) {
          const mine = users.filter((text) => text.startsWith(`p${p}|`));
          expect(mine, `${label}, process p${p}`).toEqual(
            Array.from({ length: SIGNALS }, (_, i) => textOf(`p${p}`, session, i)),
          );
        }
      }
      const keys: string[] = [];
      for await (const key of store.list('agent:echo:')) keys.push(key);
      expect(keys).toHaveLength(SESSIONS.length);
      // Not asserted (timing), but shows what the run did.
      console.info(
        `scale-out: ${PROCESSES * SESSIONS.length * SIGNALS} signals from ${PROCESSES} processes over ${SESSIONS.length} shared sessions in ${seconds.toFixed(1)} s`,
      );
    } finally {
      await store.close();
    }
  }, 400_000);

  it('a process killed with SIGKILL while holding session locks: another process takes those sessions over', async () => {
    const store = await migratedTable('takeover');
    const SESSIONS = ['k0', 'k1', 'k2', 'k3', 'k4'];
    const keys = SESSIONS.map(keyOf);
    try {
      const [doomed, survivor] = (await startChildren(store.table, 2)) as [IpcChild, IpcChild];
      // The doomed process starts a turn in every session that never ends: it holds their locks.
      for (const session of SESSIONS)
        void ask(doomed, { type: 'dispatch', session, text: `hang ${session}` }).catch(() => undefined);
      await deadline(
        (async () => {
          while ((await lockHolders(keys)).length < keys.length) await new Promise((r) => setTimeout(r, 20));
        })(),
        STEP_DEADLINE_MS,
        'the doomed process to hold every session lock',
      );
      expect(new Set(await lockHolders(keys)).size).toBe(1);

      // While it lives, the survivor waits for those sessions…
      const waiting = SESSIONS.map((session) =>
        ask<Extract<ChildReply, { type: 'outcome' }>>(survivor, {
          type: 'dispatch',
          session,
          text: `after ${session}`,
        }),
      );
      let settled = 0;
      for (const w of waiting) void w.then(() => settled++);
      await ask(survivor, { type: 'dispatch', session: 'unrelated', text: 'probe' }); // a round trip through the survivor
      expect(settled).toBe(0);

      // …and takes them over once the holder is killed: the server ends its session and its locks.
      const killedAt = Date.now();
      doomed.kill();
      const outcomes = await deadline(Promise.all(waiting), STEP_DEADLINE_MS, 'the survivor to take the sessions over');
      const takeoverMs = Date.now() - killedAt;
      for (const outcome of outcomes) expect(outcome).toEqual({ type: 'outcome', id: outcome.id, status: 'completed' });
      for (const session of SESSIONS) {
        const data = (await store.load(keyOf(session)))?.data as SessionCheckpointV1 | undefined;
        // The killed process saved nothing of its unfinished turns.
        expect(data?.history).toEqual([
          { role: 'user', content: `after ${session}` },
          { role: 'assistant', content: `ack after ${session}` },
        ]);
      }
      await close(survivor);
      console.info(`takeover: ${SESSIONS.length} sessions taken over ${takeoverMs} ms after SIGKILL of their holder`);
    } finally {
      await store.close();
    }
  }, 200_000);
});
