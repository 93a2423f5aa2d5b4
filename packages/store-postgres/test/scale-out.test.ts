// Scale-out (persistence.md): several real runner PROCESSES serve the same sessions at once
// against one database, each with a pool of at most 5 connections plus its PostgresSessionLock
// connection. Afterwards every session's history holds every signal exactly once, each process's
// signals in the order that process sent them. And a process killed with SIGKILL while holding
// session locks: the others take those sessions over within a bounded time.
import { spawn, type ChildProcess } from 'node:child_process';
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
import { keyOf, textOf, type ChildReply, type ChildRequestBody } from './fixtures/runner-protocol.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/runner-child.ts', import.meta.url));

/** Generous: a cold start compiles the TypeScript sources of every package with tsx. */
const START_DEADLINE_MS = 90_000;
/** 4 processes × 50 sessions × 20 signals on a slow, shared CI machine. */
const RUN_DEADLINE_MS = 240_000;
const STEP_DEADLINE_MS = 30_000;

const tables = new Set<string>();
const children = new Set<Child>();
afterEach(() => {
  for (const child of children) child.kill();
  children.clear();
});
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

/** Rejects with a message (and the children's stderr) when `promise` does not settle within `ms`. */
function deadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const stderr = [...children]
        .map((c) => c.stderr)
        .filter((s) => s !== '')
        .join('\n---\n');
      for (const child of children) child.kill();
      reject(
        new Error(
          `Timed out after ${ms} ms waiting for ${what}${stderr === '' ? '' : `; children's stderr:\n${stderr}`}`,
        ),
      );
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** One runner process (test/fixtures/runner-child.ts). */
class Child {
  readonly process: ChildProcess;
  stderr = '';
  readonly ready: Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #waiters = new Map<number, { resolve: (reply: ChildReply) => void; reject: (error: Error) => void }>();
  #nextId = 1;

  constructor(table: string) {
    this.process = spawn(
      process.execPath,
      ['--conditions=@signalyard/source', '--import', 'tsx', childScript, DATABASE_URL, table],
      {
        cwd: packageDir,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    children.add(this);
    this.process.stderr?.setEncoding('utf8');
    this.process.stderr?.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code, signal) => {
        const error = new Error(`A runner process exited (code ${code}, signal ${signal}); stderr:\n${this.stderr}`);
        for (const waiter of this.#waiters.values()) waiter.reject(error);
        this.#waiters.clear();
        resolve({ code, signal });
      });
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.#waiters.set(0, {
        resolve: () => {
          resolve();
        },
        reject,
      });
    });
    this.process.on('message', (raw) => {
      const reply = raw as ChildReply;
      const id = reply.type === 'ready' ? 0 : reply.id;
      const waiter = this.#waiters.get(id);
      this.#waiters.delete(id);
      waiter?.resolve(reply);
    });
  }

  request<R extends ChildReply>(request: ChildRequestBody): Promise<R> {
    const id = this.#nextId++;
    const reply = new Promise<ChildReply>((resolve, reject) => {
      this.#waiters.set(id, { resolve, reject });
    });
    this.process.send({ ...request, id });
    return reply as Promise<R>;
  }

  async close(): Promise<void> {
    await deadline(this.request({ type: 'close' }), STEP_DEADLINE_MS, 'a runner process to close');
    const exit = await deadline(this.exited, STEP_DEADLINE_MS, 'a runner process to exit');
    expect(exit.code, this.stderr).toBe(0);
    children.delete(this);
  }

  kill(): void {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
  }
}

async function startChildren(table: string, n: number): Promise<Child[]> {
  const started = Array.from({ length: n }, () => new Child(table));
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
            child.request<Extract<ChildReply, { type: 'ran' }>>({
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
      await Promise.all(runners.map((c) => c.close()));

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
      const [doomed, survivor] = (await startChildren(store.table, 2)) as [Child, Child];
      // The doomed process starts a turn in every session that never ends: it holds their locks.
      for (const session of SESSIONS)
        void doomed.request({ type: 'dispatch', session, text: `hang ${session}` }).catch(() => undefined);
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
        survivor.request<Extract<ChildReply, { type: 'outcome' }>>({
          type: 'dispatch',
          session,
          text: `after ${session}`,
        }),
      );
      let settled = 0;
      for (const w of waiting) void w.then(() => settled++);
      await survivor.request({ type: 'dispatch', session: 'unrelated', text: 'probe' }); // a round trip through the survivor
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
      await survivor.close();
      console.info(`takeover: ${SESSIONS.length} sessions taken over ${takeoverMs} ms after SIGKILL of their holder`);
    } finally {
      await store.close();
    }
  }, 200_000);
});
