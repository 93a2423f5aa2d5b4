// Two runner PROCESSES sharing one PostgreSQL table and PostgresSessionLock, both receiving
// messages for one session whose agent collects (`whenBusy: 'collect'`). The policy acts within
// each process (messages that arrive at a process while its turn runs are answered by one merged
// turn); across the processes the lock serialises turns, and every message is in the history
// exactly once, each process's in the order it was sent, each answered by a reply after it.
import { fileURLToPath } from 'node:url';
import type { Outcome } from '@signalyard/core';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import type { SessionCheckpointV1 } from 'signalyard';
import { afterAll, afterEach, expect, it } from 'vitest';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { IpcChild, within, type Message } from '@signalyard/test-utils/ipc-child';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** Generous: a cold start compiles the TypeScript sources of every package with tsx. */
const START_DEADLINE_MS = 90_000;
const STEP_DEADLINE_MS = 60_000;
const KEY = 'agent:main:main';

const tables = new Set<string>();
const children: IpcChild[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

type OutcomeReply = Message & Pick<Outcome, 'status' | 'output' | 'mergedWith'> & { readonly error?: string };

const stderr = (): string => children.map((c) => c.stderr).join('\n---\n');
const step = <T>(promise: Promise<T>, what: string): Promise<T> => within(promise, STEP_DEADLINE_MS, what, stderr);
const send = (child: IpcChild, text: string): Promise<OutcomeReply> =>
  step(child.request<OutcomeReply>({ type: 'send', text }), `the outcome of "${text}"`);

async function close(child: IpcChild): Promise<void> {
  await step(child.request({ type: 'close' }), 'a runner process to close');
  expect((await step(child.exited, 'a runner process to exit')).code, child.stderr).toBe(0);
}

describePostgres('collect across two runner processes sharing PostgreSQL and a PostgresSessionLock', () => {
  it('merges within each process; every message is in the history exactly once, each process’s in its order', async () => {
    const table = uniqueTable('busyproc');
    tables.add(table);
    const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 1 });
    await store.migrate();
    try {
      const [a, b] = [
        new IpcChild(new URL('./fixtures/busy-child.ts', import.meta.url), [DATABASE_URL, table], packageDir),
        new IpcChild(new URL('./fixtures/busy-child.ts', import.meta.url), [DATABASE_URL, table], packageDir),
      ];
      children.push(a, b);
      await within(Promise.all([a.ready, b.ready]), START_DEADLINE_MS, 'two runner processes to start', stderr);

      // A's turn holds the session (and its lock) until released.
      const a0 = send(a, 'hold a0');
      await step(a.next('holding'), 'process A to start its turn');
      const fromB = ['b0', 'b1', 'b2'].map((t) => send(b, t)); // B waits for the lock
      const fromA = ['a1', 'a2'].map((t) => send(a, t)); // arrive at A while its turn runs: collected
      // Round trips: both processes have received (and dispatched) every message above.
      await step(Promise.all([a.request({ type: 'ping' }), b.request({ type: 'ping' })]), 'both processes to answer');
      await step(a.request({ type: 'release' }), 'process A to release its turn');

      expect(await a0).toMatchObject({ status: 'completed', output: ['hold a0'] });
      const outcomesA = await Promise.all(fromA);
      for (const o of outcomesA) expect(o).toMatchObject({ status: 'completed', output: ['a1', 'a2'], mergedWith: 2 });
      const outcomesB = await Promise.all(fromB);
      for (const o of outcomesB) expect(o).toMatchObject({ status: 'completed' });
      // B's messages are answered in its order, however they were batched.
      expect(outcomesB.flatMap((o, i) => (o.output as string[]).filter((t) => t === `b${i}`))).toEqual([
        'b0',
        'b1',
        'b2',
      ]);

      // Then a burst from both processes at once.
      const burstA = Array.from({ length: 25 }, (_, i) => `A${i}`);
      const burstB = Array.from({ length: 25 }, (_, i) => `B${i}`);
      const burst = await Promise.all([...burstA.map((t) => send(a, t)), ...burstB.map((t) => send(b, t))]);
      expect(burst.filter((o) => o.status !== 'completed')).toEqual([]);
      await Promise.all([close(a), close(b)]);

      const history = ((await store.load(KEY))?.data as SessionCheckpointV1).history;
      const users = history.filter((m) => m.role === 'user').map((m) => m.content);
      const everyMessage = ['hold a0', 'a1', 'a2', 'b0', 'b1', 'b2', ...burstA, ...burstB];
      expect([...users].sort()).toEqual([...everyMessage].sort()); // each exactly once
      expect(users.filter((t) => /^(hold a|a|A)\d/.test(t))).toEqual(['hold a0', 'a1', 'a2', ...burstA]);
      expect(users.filter((t) => /^[bB]\d/.test(t))).toEqual(['b0', 'b1', 'b2', ...burstB]);
      // Every message is answered once, by a reply that comes after it.
      const seen = new Set<string>();
      const answered: string[] = [];
      for (const m of history) {
        if (m.role === 'user') seen.add(m.content);
        else
          for (const t of m.content.slice('ack '.length).split(',')) {
            expect(seen.has(t), `"${t}" answered before it arrived`).toBe(true);
            answered.push(t);
          }
      }
      expect([...answered].sort()).toEqual([...everyMessage].sort());
    } finally {
      await store.close();
    }
  }, 300_000);
});
