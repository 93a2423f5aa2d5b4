// Streams from any worker, resumable (inbox.md), over PostgreSQL: a producer runner
// (`worker: false`, its own inbox and store handles, so every event crosses the server as a row
// and a NOTIFY) streams a scripted model's reply token by token as a worker runner applies it; a
// reader resumes from an offset; a worker that stops renewing (as if killed) is replaced after its
// lease expires, and the reader sees `restarted`, then one complete reply.
import { type ChatModel, type TurnEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import { collect, deferred } from '@signalyard/test-utils';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { createRunner, type EngineFn, type Runner, type RunnerOptions } from 'signalyard';
import { afterAll, afterEach, expect, it } from 'vitest';
import { dropInbox } from './inbox-support.js';

const closers: (() => Promise<unknown>)[] = [];
const tables: { inbox: string; store: string }[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

const REPLY = 'Streams cross processes, token by token.';
const message = { channel: 'web', text: 'hi', peer: { kind: 'dm' as const, id: 'ann' } };

/** An engine that streams the model's reply as text deltas and keeps it. */
function tokenEngine(model: ChatModel): EngineFn {
  return async (ctx) => {
    let text = '';
    for await (const part of (model.stream as NonNullable<ChatModel['stream']>)({ messages: [...ctx.history] })) {
      if (part.type !== 'text-delta') continue;
      text += part.delta;
      ctx.emitText(part.delta);
    }
    return { messages: [{ role: 'assistant', content: text }], output: text };
  };
}

const deltas = (events: readonly TurnEvent[]): string[] =>
  events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : []));

/** Fresh tables for one test, migrated. */
async function freshTables(): Promise<{ inbox: string; store: string }> {
  const t = { inbox: uniqueTable('streams_inbox'), store: uniqueTable('streams_store') };
  tables.push(t);
  const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table: t.inbox, maxConnections: 1 });
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: t.store, maxConnections: 1 });
  await inbox.migrate();
  await store.migrate();
  await inbox.close();
  await store.close();
  return t;
}

/** A runner over handles of its own on the tables `t` (as another process would open them). */
function runnerOn(
  t: { inbox: string; store: string },
  engine: EngineFn,
  options: Partial<RunnerOptions>,
  inbox = new PostgresInbox({ connectionString: DATABASE_URL, table: t.inbox, maxConnections: 3, pollMs: 50 }),
): Runner {
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: t.store, maxConnections: 2 });
  const runner = createRunner({ agents: [{ id: 'main', engine }], inbox, store, ...options });
  closers.push(
    () => store.close(),
    () => inbox.close(),
    () => runner.close(),
  );
  return runner;
}

describePostgres('PostgresInbox: a producer streams what a worker applies', () => {
  afterAll(async () => {
    for (const t of tables) await dropInbox(t.inbox);
    await dropTablesAndEnd(tables.map((t) => t.store));
  });

  it(
    'token by token, as an in-process stream; a reader that drops resumes from its offset',
    { timeout: 60_000 },
    async () => {
      const t = await freshTables();
      runnerOn(t, tokenEngine(scriptedModel([REPLY], { streamChunkChars: 4 })), { worker: { pollMs: 50 } });
      const producer = runnerOn(t, tokenEngine(scriptedModel([])), { worker: false });
      const turn = producer.stream(message);
      const first: TurnEvent[] = [];
      for await (const event of turn) {
        first.push(event);
        if (first.length === 4) break; // the connection drops after routed + 3 deltas
      }
      const receiptId = (await turn.receiptId) as string;
      const from = turn.offsetOf(first[3] as TurnEvent) as string;
      const rest = await collect(producer.resumeStream({ receiptId }, { from }));
      const all = [...first, ...rest];
      expect(all[0]?.type).toBe('routed');
      expect(deltas(all).join('')).toBe(REPLY);
      expect(deltas(all).length).toBe(Math.ceil(REPLY.length / 4));
      expect(all.at(-1)).toMatchObject({ type: 'outcome', outcome: { status: 'completed', output: REPLY } });
      expect(all.filter((e) => e.type === 'outcome')).toHaveLength(1);
      expect(await turn.outcome).toMatchObject({ status: 'completed', output: REPLY });
    },
  );

  it(
    'a worker that dies mid-turn: the reader sees restarted, then one complete reply from the next worker',
    { timeout: 60_000 },
    async () => {
      const t = await freshTables();
      const stuck = deferred();
      const dying = deferred();
      const leaseMs = 500;
      const deadInbox = new PostgresInbox({
        connectionString: DATABASE_URL,
        table: t.inbox,
        maxConnections: 3,
        pollMs: 50,
      });
      runnerOn(
        t,
        async (ctx) => {
          ctx.emitText('Half a ');
          ctx.emitText('repl');
          dying.resolve();
          await stuck.promise; // hangs: its process is gone
          return { messages: [] };
        },
        { worker: { pollMs: 50, leaseMs }, closeTimeoutMs: 50 },
        deadInbox,
      );
      const producer = runnerOn(t, tokenEngine(scriptedModel([])), { worker: false });
      const turn = producer.stream(message);
      const events: TurnEvent[] = [];
      const seen = deferred();
      const reading = (async () => {
        for await (const event of turn) {
          events.push(event);
          if (event.type === 'text_delta' && event.delta === 'repl') seen.resolve();
        }
      })();
      await dying.promise;
      await seen.promise;
      // It neither renews nor acquires again (its process is gone): its lease expires on the server's clock.
      deadInbox.renew = () => new Promise<boolean>(() => undefined);
      deadInbox.acquire = () => Promise.resolve([]);
      runnerOn(t, tokenEngine(scriptedModel([REPLY], { streamChunkChars: 5 })), { worker: { pollMs: 50, leaseMs } });
      await reading;
      stuck.resolve();
      const restart = events.findIndex((e) => e.type === 'restarted');
      expect(deltas(events.slice(0, restart))).toEqual(['Half a ', 'repl']);
      expect(events[restart]).toEqual({ type: 'restarted', attempt: 2 });
      const after = events.slice(restart + 1);
      expect(after.map((e) => e.type).filter((type) => type !== 'text_delta')).toEqual(['routed', 'outcome']);
      expect(deltas(after).join('')).toBe(REPLY);
      expect(await turn.outcome).toMatchObject({ status: 'completed', output: REPLY });
    },
  );
});
