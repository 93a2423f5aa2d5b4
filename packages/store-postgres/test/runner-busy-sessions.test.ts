// Two Runners sharing one PostgreSQL table and PostgresSessionLock, both receiving messages for
// one session whose agent collects (`whenBusy: 'collect'`): the policy acts within each process,
// and across them every message is in the history exactly once, each runner's in its call order.
import { SignalKind, signal, type Outcome } from '@signalyard/core';
import { PostgresCheckpointStore, PostgresSessionLock } from '@signalyard/store-postgres';
import { deferred } from '@signalyard/test-utils';
import { createRunner, type Runner, type SessionCheckpointV1, type TurnContext, type TurnResult } from 'signalyard';
import { afterAll, afterEach, expect, it } from 'vitest';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';

const tables = new Set<string>();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

const KEY = 'agent:main:main';

/** A runner process's parts: its own store connections and lock connection on the shared table. */
function runnerOn(table: string, engine: (ctx: TurnContext) => Promise<TurnResult>): Runner {
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
  const lock = new PostgresSessionLock({ connectionString: DATABASE_URL });
  const runner = createRunner({ store, lock, agents: [{ id: 'main', engine, whenBusy: 'collect' }] });
  open.push(store, lock, runner); // closed in reverse: the runner first
  return runner;
}

const texts = (ctx: TurnContext): string[] => ctx.signals.map((s) => s.payload as string);
const send = (runner: Runner, text: string): Promise<Outcome> =>
  runner.dispatch(KEY, signal(SignalKind.UserMessage, text));

describePostgres('collect across two runners sharing PostgreSQL and a PostgresSessionLock', () => {
  it('merges within each runner; every message is in the history exactly once, each runner’s in its call order', async () => {
    const table = uniqueTable('busy');
    tables.add(table);
    const setup = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 1 });
    await setup.migrate();
    await setup.close();

    const started = deferred();
    const release = deferred();
    const engine = async (ctx: TurnContext): Promise<TurnResult> => {
      if (texts(ctx).includes('a0')) {
        started.resolve();
        await release.promise; // A holds the session lock while this turn runs
      }
      return { output: texts(ctx), messages: [{ role: 'assistant', content: `ack ${texts(ctx).join(',')}` }] };
    };
    const a = runnerOn(table, engine);
    const b = runnerOn(table, engine);

    const a0 = send(a, 'a0');
    await started.promise;
    const fromB = ['b0', 'b1', 'b2'].map((t) => send(b, t)); // b0 waits for the lock; b1, b2 queue behind it in B
    const fromA = ['a1', 'a2'].map((t) => send(a, t)); // arrive while A's turn runs: collected in A
    release.resolve();
    expect((await a0).status).toBe('completed');
    const outcomesA = await Promise.all(fromA);
    const outcomesB = await Promise.all(fromB);
    for (const o of outcomesA) expect(o).toMatchObject({ status: 'completed', output: ['a1', 'a2'], mergedWith: 2 });
    for (const o of outcomesB)
      expect(o).toMatchObject({ status: 'completed', output: ['b0', 'b1', 'b2'], mergedWith: 3 });

    // Then a burst from both runners at once.
    const burstA = Array.from({ length: 25 }, (_, i) => `A${i}`);
    const burstB = Array.from({ length: 25 }, (_, i) => `B${i}`);
    const burst = await Promise.all([...burstA.map((t) => send(a, t)), ...burstB.map((t) => send(b, t))]);
    expect(burst.filter((o) => o.status !== 'completed')).toEqual([]);

    const reader = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 1 });
    open.push(reader);
    const checkpoint = await reader.load(KEY);
    const history = (checkpoint?.data as SessionCheckpointV1).history;
    const users = history.filter((m) => m.role === 'user').map((m) => m.content);
    const everyMessage = ['a0', 'a1', 'a2', 'b0', 'b1', 'b2', ...burstA, ...burstB];
    expect([...users].sort()).toEqual([...everyMessage].sort()); // each exactly once
    expect(users.filter((t) => t.startsWith('a') || t.startsWith('A'))).toEqual(['a0', 'a1', 'a2', ...burstA]);
    expect(users.filter((t) => t.startsWith('b') || t.startsWith('B'))).toEqual(['b0', 'b1', 'b2', ...burstB]);
    // Every message is answered once, by a reply that comes after it.
    const seen = new Set<string>();
    const answered: string[] = [];
    for (const m of history) {
      if (m.role === 'user') seen.add(m.content);
      else
        for (const t of m.content.slice('ack '.length).split(',')) {
          expect(seen.has(t)).toBe(true);
          answered.push(t);
        }
    }
    expect([...answered].sort()).toEqual([...everyMessage].sort());
  });
});
