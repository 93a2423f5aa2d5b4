// Streams from any worker, resumable (inbox.md), on JetStream: a producer runner (`worker: false`,
// a connection of its own) streams a scripted model's reply token by token as a worker runner
// applies it, over a nats-server of the test's own and a PostgresCheckpointStore; a reader
// resumes from an offset; a worker that stops renewing (as if killed) is replaced once its lease
// expires, and the reader sees `restarted`, then one complete reply.
import { randomBytes } from 'node:crypto';
import { type ChatModel, type TurnEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { collect, deferred } from '@signalyard/test-utils';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { DATABASE_URL, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { createRunner, type EngineFn, type Runner, type RunnerOptions } from 'signalyard';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';

const REPLY = 'Streams cross processes, token by token.';
const message = { channel: 'web', text: 'hi', peer: { kind: 'dm' as const, id: 'ann' } };
const tables: string[] = [];
const closers: (() => Promise<unknown>)[] = [];
let server: NatsServer | undefined;
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

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

/** A stream name and a store table of one test, the store migrated. */
async function fresh(): Promise<{ stream: string; table: string }> {
  const table = uniqueTable('nats_streams');
  tables.push(table);
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 1 });
  await store.migrate();
  await store.close();
  return { stream: `STREAMS_${randomBytes(6).toString('hex')}`, table };
}

function inboxOn(stream: string): JetStreamInbox {
  return new JetStreamInbox({ servers: (server as NatsServer).url, stream, partitions: 4, pollMs: 50 });
}

/** A runner over connections of its own (as another process would open them). */
function runnerOn(
  t: { stream: string; table: string },
  engine: EngineFn,
  options: Partial<RunnerOptions>,
  inbox = inboxOn(t.stream),
): Runner {
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: t.table, maxConnections: 2 });
  const runner = createRunner({ agents: [{ id: 'main', engine }], inbox, store, ...options });
  closers.push(
    () => store.close(),
    () => inbox.close(),
    () => runner.close(),
  );
  return runner;
}

describeNats('JetStreamInbox: a producer streams what a worker applies', () => {
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server?.stop();
    await dropTablesAndEnd(tables);
  });

  it(
    'token by token, as an in-process stream; a reader that drops resumes from its offset',
    { timeout: 60_000 },
    async () => {
      const t = await fresh();
      const setup = inboxOn(t.stream);
      await setup.provision();
      await setup.close();
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
    },
  );

  it(
    'a worker that dies mid-turn: the reader sees restarted, then one complete reply from the next worker',
    { timeout: 60_000 },
    async () => {
      const t = await fresh();
      const setup = inboxOn(t.stream);
      await setup.provision();
      await setup.close();
      const stuck = deferred();
      const dying = deferred();
      const leaseMs = 1000;
      const deadInbox = inboxOn(t.stream);
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
      // It neither renews nor acquires again (its process is gone): its lease expires on the server.
      deadInbox.renew = () => new Promise<boolean>(() => undefined);
      deadInbox.acquire = () => Promise.resolve([]);
      runnerOn(t, tokenEngine(scriptedModel([REPLY], { streamChunkChars: 5 })), { worker: { pollMs: 50, leaseMs } });
      await reading;
      stuck.resolve();
      const restart = events.findIndex((e) => e.type === 'restarted');
      expect(deltas(events.slice(0, restart))).toEqual(['Half a ', 'repl']);
      expect(events[restart]).toMatchObject({ type: 'restarted' });
      const after = events.slice(restart + 1);
      expect(after.map((e) => e.type).filter((type) => type !== 'text_delta')).toEqual(['routed', 'outcome']);
      expect(deltas(after).join('')).toBe(REPLY);
      expect(await turn.outcome).toMatchObject({ status: 'completed', output: REPLY });
    },
  );
});
