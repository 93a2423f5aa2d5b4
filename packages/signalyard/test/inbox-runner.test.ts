// The Runner's durable-inbox surface on MemoryInbox: its options and their errors, input checks
// of accept/acceptMessage/outcome/deadLetters, retries and back-pressure, live outcomes, waits
// that end, whenBusy across the inbox — and that without a durable inbox nothing changes.
import {
  InboxError,
  MemoryCheckpointStore,
  MemoryInbox,
  signal,
  type Inbox,
  type InboxAcceptEntry,
  type Outcome,
  type SessionLock,
} from '@signalyard/core';
import { collect, deferred, rejectsCode, type Deferred } from '@signalyard/test-utils';
import { createRunner, type EngineFn, type Runner, type RunnerOptions, type TurnResult } from 'signalyard';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIN } from './support.js';

const runners: Runner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close();
});

const user = (text: string) => signal('user_message', { channel: 'cli', text });
const textOf = (payload: unknown): string => String((payload as { text?: unknown }).text);
const echo: EngineFn = (ctx) =>
  Promise.resolve({
    messages: [{ role: 'assistant', content: `re: ${textOf(ctx.signal.payload)}` }],
    output: { said: textOf(ctx.signal.payload) },
  });

function make(options: Partial<RunnerOptions> & { inbox?: Inbox }, engine: EngineFn = echo): Runner {
  const runner = createRunner({
    agents: [{ id: 'main', engine }],
    worker: { pollMs: 10 },
    ...options,
  });
  runners.push(runner);
  return runner;
}

const configCode = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: unknown; problems?: unknown }).code;
  }
  return undefined;
};

describe('options', () => {
  it('a lock with a durable inbox is INBOX_CONFIG_INVALID (leases replace the lock)', () => {
    const lock: SessionLock = { withLock: (_key, fn) => fn(new AbortController().signal) };
    expect(
      configCode(() => createRunner({ agents: [{ id: 'main', engine: echo }], inbox: new MemoryInbox(), lock })),
    ).toBe('INBOX_CONFIG_INVALID');
  });

  it('rejects malformed inbox, worker, outcomeTtlMs and maxOutcomeBytes with CONFIG_INVALID naming each', () => {
    const agents = [{ id: 'main', engine: echo }];
    const bad = [
      { inbox: { durable: true } },
      { worker: 'yes' },
      { worker: { leaseMs: 0 } },
      { worker: { pollMs: 1.5 } },
      { worker: { maxDeliveries: -1 } },
      { worker: { id: '' } },
      { worker: { unknown: 1 } },
      { outcomeTtlMs: 0 },
      { maxOutcomeBytes: -1 },
    ];
    for (const extra of bad) {
      let error: unknown;
      try {
        createRunner({ agents, ...(extra as object) });
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(extra)).toMatchObject({ code: 'CONFIG_INVALID' });
      const paths = (error as { problems: { path: string }[] }).problems.map((p) => p.path);
      expect(
        paths.some((p) => p.startsWith(Object.keys(extra)[0] as string)),
        JSON.stringify(paths),
      ).toBe(true);
    }
  });

  it('without a durable inbox nothing changes: a non-durable one keeps the in-process queue, inbox methods say so', async () => {
    const inbox = new MemoryInbox();
    const notDurable = Object.assign(Object.create(inbox) as Inbox, { durable: false });
    const accepted: InboxAcceptEntry[] = [];
    notDurable.accept = (entry) => {
      accepted.push(entry);
      return inbox.accept(entry);
    };
    const runner = make({ inbox: notDurable });
    expect((await runner.handle({ channel: 'cli', text: 'hi' })).output).toEqual({ said: 'hi' });
    expect(accepted).toEqual([]);
    await rejectsCode(runner.accept(MAIN, user('x')), 'INBOX_CONFIG_INVALID');
    await rejectsCode(runner.outcome('r-1'), 'INBOX_CONFIG_INVALID');
    expect(configCode(() => runner.deadLetters())).toBe('INBOX_CONFIG_INVALID');
    await inbox.close();
  });
});

describe('runner.inbox', () => {
  it('is the durable inbox the runner was made with, read-only, for producers and workers alike', async () => {
    const inbox = new MemoryInbox();
    const worker = make({ inbox });
    const producer = make({ inbox, worker: false });
    expect(worker.inbox).toBe(inbox);
    expect(producer.inbox).toBe(inbox);
    expect(() => {
      (worker as { inbox: unknown }).inbox = new MemoryInbox();
    }).toThrow(TypeError);
    expect(worker.inbox).toBe(inbox);
    await inbox.close();
  });

  it('is undefined without an inbox, and with a non-durable one (which the runner drops)', async () => {
    expect(make({}).inbox).toBeUndefined();
    const inbox = new MemoryInbox();
    const notDurable = Object.assign(Object.create(inbox) as Inbox, { durable: false });
    expect(make({ inbox: notDurable }).inbox).toBeUndefined();
    await inbox.close();
  });

  it('lists what was accepted (pending), and stays open and readable after runner.close()', async () => {
    const inbox = new MemoryInbox();
    const runner = make({ inbox, worker: false });
    const receipt = await runner.accept(MAIN, user('waiting'));
    const listed = runner.inbox as MemoryInbox;
    expect((await listed.pending()).map((e) => e.receiptId)).toEqual([receipt.receiptId]);
    await runner.close();
    expect(runner.inbox).toBe(inbox);
    expect((await inbox.pending()).map((e) => e.receiptId)).toEqual([receipt.receiptId]);
    await inbox.close();
  });
});

describe('accept and outcome', () => {
  it('rejects bad input with RUNNER_INPUT_INVALID, writing nothing', async () => {
    const inbox = new MemoryInbox();
    const runner = make({ inbox, worker: false });
    await rejectsCode(runner.accept('not a key', user('x')), 'RUNNER_INPUT_INVALID');
    await rejectsCode(runner.accept(MAIN, { kind: 'nope' } as never), 'RUNNER_INPUT_INVALID');
    await rejectsCode(runner.accept(MAIN, signal('custom:x', { n: Number.NaN })), 'RUNNER_INPUT_INVALID');
    await rejectsCode(runner.accept(MAIN, signal('custom:x', { f: () => 1 })), 'RUNNER_INPUT_INVALID');
    await rejectsCode(runner.accept(MAIN, user('x'), { id: '' }), 'RUNNER_INPUT_INVALID');
    await rejectsCode(runner.accept(MAIN, user('x'), { agentId: 'ghost' }), 'RUNNER_INPUT_INVALID');
    await rejectsCode(runner.acceptMessage({ channel: 'cli' } as never), 'RUNNER_INPUT_INVALID');
    await rejectsCode(runner.outcome(''), 'RUNNER_INPUT_INVALID');
    await rejectsCode(runner.outcome('r', { timeoutMs: -5 }), 'RUNNER_INPUT_INVALID');
    expect(configCode(() => runner.deadLetters({ limit: 0 }))).toBe('RUNNER_INPUT_INVALID');
    expect(await inbox.pending()).toEqual([]);
    await inbox.close();
  });

  it('acceptMessage resolves the session as handle does; the worker in this process gives the live Outcome', async () => {
    const inbox = new MemoryInbox();
    const runner = make({ inbox });
    const receipt = await runner.acceptMessage({ channel: 'cli', text: 'hello' }, { id: 'msg-1' });
    expect(receipt.sessionKey).toBe(MAIN);
    const outcome = await runner.outcome(receipt.receiptId);
    expect(outcome.output).toEqual({ said: 'hello' });
    // Asked again: the same live object, not a copy rebuilt from JSON.
    expect(await runner.outcome(receipt.receiptId)).toBe(outcome);
    await inbox.close();
  });

  it("the settling runner's live Outcome is kept outcomeTtlMs on its clock, then OUTCOME_EXPIRED as from any process", async () => {
    let now = Date.parse('2026-01-01T00:00:00.000Z');
    const clock = { now: () => now };
    const inbox = new MemoryInbox({ clock });
    const runner = make({ inbox, clock, outcomeTtlMs: 1000 });
    const receipt = await runner.accept(MAIN, user('soon gone'));
    const outcome = await runner.outcome(receipt.receiptId);
    now += 999;
    expect(await runner.outcome(receipt.receiptId)).toBe(outcome);
    now += 1;
    await rejectsCode(runner.outcome(receipt.receiptId), 'OUTCOME_EXPIRED');
    // and forgotten: asked again, the same answer
    await rejectsCode(runner.outcome(receipt.receiptId), 'OUTCOME_EXPIRED');
    await inbox.close();
  });

  it('keeps the latest 1,024 live outcomes: an older one is rebuilt from the inbox', async () => {
    const inbox = new MemoryInbox();
    const runner = make({ inbox });
    const settled: { receiptId: string; outcome: Outcome }[] = [];
    // one after another: settled in this order
    for (let i = 0; i < 1025; i++) {
      const { receiptId } = await runner.accept(MAIN, user(`m${String(i)}`));
      settled.push({ receiptId, outcome: await runner.outcome(receiptId) });
    }
    const [first, second] = settled;
    // the first settled is no longer kept live: answered again, a copy rebuilt from the inbox's JSON
    const again = await runner.outcome(first?.receiptId ?? '');
    expect(again).not.toBe(first?.outcome);
    expect(again.output).toEqual({ said: 'm0' });
    expect(await runner.outcome(second?.receiptId ?? '')).toBe(second?.outcome);
    await inbox.close();
  });

  it('retries an accept whose acknowledgement was lost with the same id (one entry)', async () => {
    const inbox = new MemoryInbox();
    const ids: string[] = [];
    const accept = inbox.accept.bind(inbox);
    inbox.accept = async (entry) => {
      ids.push(entry.id);
      const receipt = await accept(entry);
      if (ids.length === 1) throw new InboxError({ code: 'INBOX_OUTCOME_UNKNOWN', message: 'ack lost' });
      return receipt;
    };
    const runner = make({ inbox, worker: false });
    const receipt = await runner.accept(MAIN, user('once'));
    expect(ids.length).toBe(2);
    expect(ids[1]).toBe(ids[0]);
    expect((await inbox.pending()).map((e) => e.receiptId)).toEqual([receipt.receiptId]);
    await inbox.close();
  });

  it('INBOX_FULL surfaces from accept with retryAfterMs; nothing is written', async () => {
    const inbox = new MemoryInbox({ maxPendingPerSession: 1, retryAfterMs: 250 });
    const runner = make({ inbox, worker: false });
    await runner.accept(MAIN, user('one'));
    const error = await rejectsCode(runner.accept(MAIN, user('two')), 'INBOX_FULL');
    expect((error as { retryAfterMs?: unknown }).retryAfterMs).toBe(250);
    expect((await inbox.pending()).length).toBe(1);
    await inbox.close();
  });

  it("a caller's abortSignal and timeoutMs end only the wait: the entry is still settled", async () => {
    const inbox = new MemoryInbox();
    const store = new MemoryCheckpointStore();
    const producer = make({ inbox, store, worker: false });
    const controller = new AbortController();
    const waiting = producer.dispatch(MAIN, user('later'), { abortSignal: controller.signal });
    controller.abort();
    await rejectsCode(waiting, 'ABORTED');
    const [entry] = await inbox.pending();
    await rejectsCode(producer.outcome(entry?.receiptId ?? '', { timeoutMs: 20 }), 'OUTCOME_TIMEOUT');
    make({ inbox, store });
    expect((await producer.outcome(entry?.receiptId ?? '')).status).toBe('completed');
    await inbox.close();
  });

  it('an output over maxOutcomeBytes crosses processes as { truncated, bytes }', async () => {
    const inbox = new MemoryInbox();
    const store = new MemoryCheckpointStore();
    const producer = make({ inbox, store, worker: false });
    make({ inbox, store, maxOutcomeBytes: 16 }, () =>
      Promise.resolve({ messages: [{ role: 'assistant', content: 'ok' }], output: 'x'.repeat(100) }),
    );
    const outcome = await producer.handle({ channel: 'cli', text: 'big' });
    expect(outcome.output).toEqual({ truncated: true, bytes: 102 });
    await inbox.close();
  });

  it('deadLetters lists nothing while nothing is poisoned', async () => {
    const inbox = new MemoryInbox();
    const runner = make({ inbox });
    expect(await collect(runner.deadLetters({ limit: 5 }))).toEqual([]);
    await inbox.close();
  });
});

describe('leases', () => {
  it('a lost lease aborts the turn (reason LEASE_LOST) and saves nothing; the redelivery publishes restarted and settles it (each attempt publishing its events)', async () => {
    const inbox = new MemoryInbox();
    const store = new MemoryCheckpointStore();
    const renew = inbox.renew.bind(inbox);
    let refuse = true;
    inbox.renew = async (lease) => (refuse ? false : renew(lease));
    const published: unknown[] = [];
    const publish = inbox.publish.bind(inbox);
    inbox.publish = async (receiptId, attempt, event) => {
      published.push({ attempt, event });
      await publish(receiptId, attempt, event);
    };
    const publishMany = inbox.publishMany.bind(inbox);
    inbox.publishMany = async (receiptId, attempt, events) => {
      for (const event of events) published.push({ attempt, event });
      await publishMany(receiptId, attempt, events);
    };
    // The last events go out with the outcome and the acknowledgement (Inbox.settle).
    const settle = inbox.settle.bind(inbox);
    inbox.settle = async (entry, outcome, ttlMs, last) => {
      for (const event of last?.events ?? []) published.push({ attempt: last?.attempt, event });
      await settle(entry, outcome, ttlMs, last);
    };
    const reasons: unknown[] = [];
    const runner = make({ inbox, store, worker: { pollMs: 10, leaseMs: 60 } }, (ctx) => {
      if (reasons.length > 0) return Promise.resolve({ messages: [{ role: 'assistant', content: 'second try' }] });
      return new Promise<TurnResult>((resolve) => {
        ctx.abortSignal.addEventListener('abort', () => {
          reasons.push((ctx.abortSignal.reason as { code?: unknown }).code);
          refuse = false;
          resolve({ messages: [{ role: 'assistant', content: 'after the loss' }] });
        });
      });
    });
    const receipt = await runner.accept(MAIN, user('x'));
    expect((await runner.outcome(receipt.receiptId)).status).toBe('completed');
    expect(reasons).toEqual(['LEASE_LOST']);
    const history = ((await store.load(MAIN))?.data as { history: { content: string }[] }).history;
    expect(history.map((m) => m.content)).toEqual(['x', 'second try']);
    // Every turn event is published (routed with the turn's next event, here its outcome); the
    // aborted attempt publishes nothing, the redelivery starts with restarted.
    const types = (published as { attempt: number; event: { type: string } }[]).map(
      (p) => `${p.attempt}:${p.event.type}`,
    );
    expect(types).toEqual(['2:restarted', '2:routed', '2:outcome']);
    expect(published[0]).toEqual({ attempt: 2, event: { type: 'restarted', attempt: 2 } });
    await inbox.close();
  });
});

describe('the receipt id a turn sees', () => {
  it("is the entry's receiptId on every delivery, and a fresh UUID per signal without an inbox", async () => {
    const ids: string[] = [];
    const engine: EngineFn = (ctx) => {
      ids.push((ctx as unknown as { receiptId: string }).receiptId);
      return Promise.resolve({ messages: [] });
    };
    const inbox = new MemoryInbox();
    const runner = make({ inbox }, engine);
    const receipt = await runner.accept(MAIN, user('x'));
    await runner.outcome(receipt.receiptId);
    expect(ids).toEqual([receipt.receiptId]);
    const plain = make({}, engine);
    await plain.handle({ channel: 'cli', text: 'a' });
    await plain.handle({ channel: 'cli', text: 'b' });
    expect(ids[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[2]).not.toBe(ids[1]);
    await inbox.close();
  });
});

describe('whenBusy across the inbox', () => {
  it('collect: the lease holder batches the pending entries into one turn', async () => {
    const inbox = new MemoryInbox();
    const store = new MemoryCheckpointStore();
    const started = deferred();
    const holds: Deferred<TurnResult>[] = [];
    const seen: string[][] = [];
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          whenBusy: 'collect',
          engine: (ctx) => {
            seen.push(ctx.signals.map((s) => textOf(s.payload)));
            started.resolve();
            const hold = deferred<TurnResult>();
            holds.push(hold);
            return hold.promise;
          },
        },
      ],
      store,
      inbox,
      worker: { pollMs: 10 },
    });
    runners.push(runner);
    const first = await runner.accept(MAIN, user('a'));
    await started.promise;
    const second = await runner.accept(MAIN, user('b'));
    const third = await runner.accept(MAIN, user('c'));
    holds[0]?.resolve({ messages: [{ role: 'assistant', content: 'answered a' }] });
    await runner.outcome(first.receiptId);
    while (holds.length < 2) await new Promise((r) => setTimeout(r, 5));
    holds[1]?.resolve({ messages: [{ role: 'assistant', content: 'answered b and c' }] });
    const outcomes = await Promise.all([runner.outcome(second.receiptId), runner.outcome(third.receiptId)]);
    expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed']);
    expect(seen).toEqual([['a'], ['b', 'c']]);
    const data = (await store.load(MAIN))?.data as { inboxSeq?: string };
    expect(data.inboxSeq).toBe('3');
    await inbox.close();
  });

  it('interrupt: a newer entry, fed to the lease holder on its notice, interrupts the turn in flight', async () => {
    const inbox = new MemoryInbox();
    const store = new MemoryCheckpointStore();
    const started = deferred();
    const finishFirst: Deferred<TurnResult> = deferred();
    const seen: string[][] = [];
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          whenBusy: 'interrupt',
          engine: (ctx) => {
            seen.push(ctx.signals.map((s) => textOf(s.payload)));
            if (seen.length > 1) return Promise.resolve({ messages: [{ role: 'assistant', content: 'answer' }] });
            started.resolve();
            return finishFirst.promise;
          },
        },
      ],
      store,
      inbox,
      worker: { pollMs: 10 },
    });
    runners.push(runner);
    const producer = make({ inbox, store, worker: false });
    const first = await producer.accept(MAIN, user('first'));
    await started.promise;
    const second = await producer.accept(MAIN, user('second'));
    // The lease holder has read the second entry (it waits in its queue): the turn is interrupted.
    while ((await runner.session(MAIN))?.queued !== 1) await new Promise((r) => setTimeout(r, 5));
    finishFirst.resolve({ messages: [{ role: 'assistant', content: 'partial' }] });
    const outcomes = await Promise.all([producer.outcome(first.receiptId), producer.outcome(second.receiptId)]);
    expect(outcomes.map((o) => o.status)).toEqual(['stopped', 'completed']);
    expect(seen).toEqual([['first'], ['second']]);
    const data = (await store.load(MAIN))?.data as { inboxSeq?: string; history: { content: string }[] };
    expect(data.history.map((m) => m.content)).toEqual(['first', 'partial', 'second', 'answer']);
    expect(data.inboxSeq).toBe('2');
    await inbox.close();
  });
});
