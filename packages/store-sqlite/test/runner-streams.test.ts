// Streams from any worker, resumable (inbox.md), over one SQLite file: a producer runner
// (`worker: false`) streams a scripted model's reply token by token as a worker runner applies
// it; a reader resumes from an offset; a worker that stops renewing (as if killed) is replaced
// after its lease expires, and the reader sees `restarted`, then one complete reply.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChatModel, type TurnEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { collect, deferred } from '@signalyard/test-utils';
import { createRunner, type EngineFn, type Runner, type RunnerOptions } from 'signalyard';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-runner-streams-'));
let files = 0;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
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

/** A runner over fresh handles on the file `path` (as another process would open it). */
function runnerOn(
  path: string,
  engine: EngineFn,
  options: Partial<RunnerOptions>,
  inbox = new SqliteInbox({ path, pollMs: 20 }),
): Runner {
  const store = new SqliteCheckpointStore({ path });
  const runner = createRunner({ agents: [{ id: 'main', engine }], inbox, store, ...options });
  closers.push(
    () => runner.close(),
    () => inbox.close(),
  );
  return runner;
}

describe('SqliteInbox: a producer streams what a worker applies', () => {
  it('token by token, as an in-process stream; a reader that drops resumes from its offset', async () => {
    const path = join(dir, `streams-${String(files++)}.db`);
    runnerOn(path, tokenEngine(scriptedModel([REPLY], { streamChunkChars: 4 })), { worker: { pollMs: 20 } });
    const producer = runnerOn(path, tokenEngine(scriptedModel([])), { worker: false });
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
  });

  it('a worker that dies mid-turn: the reader sees restarted, then one complete reply from the next worker', async () => {
    const path = join(dir, `streams-${String(files++)}.db`);
    const stuck = deferred();
    const dying = deferred();
    const leaseMs = 300;
    const deadInbox = new SqliteInbox({ path, pollMs: 20 });
    runnerOn(
      path,
      async (ctx) => {
        ctx.emitText('Half a ');
        ctx.emitText('repl');
        dying.resolve();
        await stuck.promise; // hangs: its process is gone
        return { messages: [] };
      },
      { worker: { pollMs: 20, leaseMs }, closeTimeoutMs: 50 },
      deadInbox,
    );
    const producer = runnerOn(path, tokenEngine(scriptedModel([])), { worker: false });
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
    // It neither renews nor acquires again (its process is gone): its lease expires on the inbox's clock.
    deadInbox.renew = () => new Promise<boolean>(() => undefined);
    deadInbox.acquire = () => Promise.resolve([]);
    runnerOn(path, tokenEngine(scriptedModel([REPLY], { streamChunkChars: 5 })), { worker: { pollMs: 20, leaseMs } });
    await reading;
    stuck.resolve();
    const restart = events.findIndex((e) => e.type === 'restarted');
    expect(deltas(events.slice(0, restart))).toEqual(['Half a ', 'repl']);
    expect(events[restart]).toEqual({ type: 'restarted', attempt: 2 });
    const after = events.slice(restart + 1);
    expect(after.map((e) => e.type).filter((t) => t !== 'text_delta')).toEqual(['routed', 'outcome']);
    expect(deltas(after).join('')).toBe(REPLY);
    expect(await turn.outcome).toMatchObject({ status: 'completed', output: REPLY });
  });
});
