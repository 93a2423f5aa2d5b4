// Streams from any worker, resumable (inbox.md): a producer (`worker: false`) streams the turn a
// worker runner applies, as a local stream; resumes from an offset and by session; a redelivery
// (a second worker after the first one's lease is gone) shows `restarted`, then one whole reply.
import { MemoryCheckpointStore, MemoryInbox, type Inbox, type TurnEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { collect, deferred, rejectsCode } from '@signalyard/test-utils';
import { createRunner, type EngineFn, type Runner, type RunnerOptions } from 'signalyard';
import { afterEach, describe, expect, it } from 'vitest';
import { streamingPair, tokenEngine, shown } from './inbox-streams-support.js';

const runners: Runner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close();
});

function make(options: Partial<RunnerOptions> & { inbox: Inbox }, engine: EngineFn): Runner {
  const runner = createRunner({ agents: [{ id: 'main', engine }], ...options });
  runners.push(runner);
  return runner;
}

const message = (text: string) => ({ channel: 'web', text, peer: { kind: 'dm' as const, id: 'ann' } });

describe('a producer streams what a worker applies', () => {
  it('runner.stream on worker: false yields the same events as an in-process stream, with offsets, ending after the outcome', async () => {
    const reply = 'Hello there, how can I help you today?';
    const local = createRunner({
      agents: [{ id: 'main', engine: tokenEngine(scriptedModel([reply], { streamChunkChars: 3 })) }],
    });
    const expected = await collect(local.stream(message('hi')));
    await local.close();

    const inbox = new MemoryInbox();
    const store = new MemoryCheckpointStore();
    make({ inbox, store, worker: { pollMs: 10 } }, tokenEngine(scriptedModel([reply], { streamChunkChars: 3 })));
    const producer = make({ inbox, store, worker: false }, tokenEngine(scriptedModel([])));
    const turn = producer.stream(message('hi'));
    const events = await collect(turn);
    expect(shown(events)).toEqual(shown(expected));
    expect(events.filter((e) => e.type === 'text_delta').length).toBeGreaterThan(5);
    const outcome = await turn.outcome;
    expect(outcome).toMatchObject({ status: 'completed' });
    expect(events.at(-1)).toEqual({ type: 'outcome', outcome });
    const receiptId = await turn.receiptId;
    expect(typeof receiptId).toBe('string');
    const offsets = events.map((e) => turn.offsetOf(e));
    expect(offsets.every((o) => typeof o === 'string')).toBe(true);
    expect(new Set(offsets).size).toBe(offsets.length);
    expect(turn.offsetOf({ type: 'restarted', attempt: 2 })).toBeUndefined();
  });

  it('an in-process stream (no durable inbox) has no receipt id and no offsets', async () => {
    const local = createRunner({ agents: [{ id: 'main', engine: tokenEngine(scriptedModel(['ok'])) }] });
    runners.push(local);
    const turn = local.stream(message('hi'));
    const events = await collect(turn);
    expect(await turn.receiptId).toBeUndefined();
    expect(events.map((e) => turn.offsetOf(e))).toEqual(events.map(() => undefined));
  });
});

describe('resumeStream', () => {
  it('{ receiptId } from an offset yields exactly the rest; by session serves the in-flight attempt from its start', async () => {
    const { producer, release, started } = streamingPair(make, new MemoryInbox());
    const turn = producer.stream(message('hi'));
    const first: TurnEvent[] = [];
    for await (const event of turn) {
      first.push(event);
      if (first.length === 3) break; // the client's connection drops after 3 events
    }
    await started;
    const receiptId = (await turn.receiptId) as string;
    const routed = first[0] as Extract<TurnEvent, { type: 'routed' }>;
    const bySession = collect(producer.resumeStream({ sessionKey: routed.sessionKey }));
    const resumed = producer.resumeStream({ receiptId }, { from: turn.offsetOf(first[2] as TurnEvent) as string });
    release.resolve();
    const rest = await collect(resumed);
    const all = [...first, ...rest];
    expect(all.map((e) => e.type)).toEqual([
      'routed',
      'text_delta',
      'text_delta',
      'text_delta',
      'text_delta',
      'outcome',
    ]);
    expect(shown(all).filter((s) => s.startsWith('delta:'))).toEqual([
      'delta:Hel',
      'delta:lo ',
      'delta:wor',
      'delta:ld',
    ]);
    expect(await resumed.receiptId).toBe(receiptId);
    expect((await resumed.outcome).status).toBe('completed');
    expect(shown(await bySession)).toEqual(shown(all));
  });

  it('{ sessionKey } with nothing in flight ends at once; its outcome rejects with OUTCOME_EXPIRED', async () => {
    const inbox = new MemoryInbox();
    const producer = make({ inbox, worker: false }, tokenEngine(scriptedModel([])));
    const stream = producer.resumeStream({ sessionKey: 'agent:main:web:dm:nobody' });
    expect(await collect(stream)).toEqual([]);
    await rejectsCode(stream.outcome, 'OUTCOME_EXPIRED');
    expect(await stream.receiptId).toBeUndefined();
  });

  it('refuses bad references and options from the iteration, and needs a durable inbox', async () => {
    const inbox = new MemoryInbox();
    const producer = make({ inbox, worker: false }, tokenEngine(scriptedModel([])));
    for (const [ref, opts] of [
      [{}, undefined],
      [{ receiptId: '' }, undefined],
      [{ receiptId: 'r', sessionKey: 'agent:main:main' }, undefined],
      [{ sessionKey: 'not a key' }, undefined],
      [{ sessionKey: 'agent:main:main' }, { from: '3' }],
      [{ receiptId: 'r' }, { from: 3 }],
    ] as const) {
      await rejectsCode(collect(producer.resumeStream(ref as never, opts as never)), 'RUNNER_INPUT_INVALID');
    }
    const plain = createRunner({ agents: [{ id: 'main', engine: tokenEngine(scriptedModel([])) }] });
    runners.push(plain);
    await rejectsCode(collect(plain.resumeStream({ receiptId: 'r' })), 'INBOX_CONFIG_INVALID');
  });
});

describe('a worker dies mid-turn', () => {
  it('the reader sees restarted, then one complete reply from the next worker', async () => {
    let now = Date.now();
    const inbox = new MemoryInbox({ clock: { now: () => now } });
    const store = new MemoryCheckpointStore();
    const stuck = deferred();
    const dying = deferred();
    // The first worker streams two tokens, then hangs: its process "died" (it never renews).
    make({ inbox, store, worker: { pollMs: 10, leaseMs: 600_000 } }, async (ctx) => {
      ctx.emitText('Dead ');
      ctx.emitText('end');
      dying.resolve();
      await stuck.promise;
      return { messages: [] };
    });
    const producer = make({ inbox, store, worker: false }, tokenEngine(scriptedModel([])));
    const turn = producer.stream(message('hi'));
    const events: TurnEvent[] = [];
    const seen = deferred();
    const reading = (async () => {
      for await (const event of turn) {
        events.push(event);
        if (event.type === 'text_delta' && event.delta === 'end') seen.resolve();
      }
    })();
    await dying.promise;
    await seen.promise;
    now += 700_000; // its lease expired
    make(
      { inbox, store, worker: { pollMs: 10 } },
      tokenEngine(scriptedModel(['A whole new reply'], { streamChunkChars: 4 })),
    );
    await reading;
    stuck.resolve();
    const text = shown(events);
    expect(text.slice(0, 3)).toEqual(['routed', 'delta:Dead ', 'delta:end']);
    expect(text[3]).toBe('restarted:2');
    const after = text.slice(4);
    expect(
      after
        .filter((s) => s.startsWith('delta:'))
        .map((s) => s.slice(6))
        .join(''),
    ).toBe('A whole new reply');
    expect(after.at(-1)).toBe('outcome:completed');
    expect(after.filter((s) => s === 'routed')).toHaveLength(1);
  });
});
