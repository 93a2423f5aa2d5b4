// Crash windows on a Runner over a durable inbox, on MemoryInbox + MemoryCheckpointStore and on
// SqliteInbox + SqliteCheckpointStore over one file: a worker dies between an entry's settling
// save (or a control entry's effect) and its outcome's storing or its acknowledgement, and the
// next worker settles it once, with the outcome the first one gave it.
import { Action, type CheckpointStore, type Inbox, type InboxEntry, type SessionCheckpointV1 } from '@signalyard/core';
import { deferred, type Deferred } from '@signalyard/test-utils';
import { createRunner, type EngineFn, type RunnerOptions, type TurnResult } from 'signalyard';
import { describe, expect, it } from 'vitest';
import {
  KEY,
  historyOf,
  inboxSeqOf,
  runnerInboxFile,
  user,
  type RunnerOn,
  type Storage,
} from './runner-inbox-support.js';

const file = runnerInboxFile('signalyard-runner-inbox-control-');
const { track } = file;
const echo: EngineFn = (ctx) => {
  const text = String((ctx.signal.payload as { text?: unknown }).text);
  return Promise.resolve({ messages: [{ role: 'assistant', content: `re: ${text}` }] });
};

/** A worker runner on `storage` answering with `echo` (`extra` overrides). */
const runnerOn = (storage: Storage, extra: Partial<RunnerOptions> = {}): RunnerOn =>
  file.runnerOn(storage, echo, extra);

/** A worker runner over `inbox` that dies as `dying` says (short leases: the next worker takes over soon). */
const dyingWorker = (
  storage: Storage,
  inbox: Inbox,
  agent: RunnerOptions['agents'][number] = { id: 'main', engine: echo },
) => file.dyingWorker(storage, inbox, agent);

/**
 * `inbox` as a worker sees it until it dies: `dies(method, args)` says which call kills it (that
 * call fails; `died` resolves); dead, it renews no lease and takes none, so another worker takes
 * its keys over once their leases expire.
 */
function dying(
  inbox: Inbox,
  dies: (method: 'putOutcome' | 'ack', args: unknown[]) => boolean,
): { inbox: Inbox; died: Promise<void> } {
  const died = deferred();
  let dead = false;
  const proxy = new Proxy(inbox, {
    get(target, property) {
      if (property === 'putOutcome' || property === 'ack') {
        return (...args: unknown[]) => {
          if (dead || !dies(property, args))
            return (target[property] as (...a: unknown[]) => Promise<void>).apply(target, args);
          dead = true;
          died.resolve();
          return Promise.reject(new Error(`the worker died in ${property}`));
        };
      }
      // These windows lie between putOutcome and ack: the worker takes the separate calls (Inbox.settle
      // writes both at once; its window, before the outcome, is runner-inbox.test.ts's).
      if (property === 'settle') return undefined;
      if (property === 'renew' && dead) return () => Promise.resolve(false);
      if (property === 'acquire' && dead) return () => Promise.resolve([]);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { inbox: proxy, died: died.promise };
}

/**
 * `store` and `inbox` as a worker sees them until it freezes (a `kill -9` seen from outside):
 * from the save `freezesOn(data)` picks, every call hangs, renewals fail and no lease is taken, so
 * another worker takes its keys over once their leases expire. `thaw()` rejects what hangs (for
 * the test's clean-up).
 */
function freezing(
  store: CheckpointStore,
  inbox: Inbox,
  freezesOn: (data: SessionCheckpointV1) => boolean,
): { store: CheckpointStore; inbox: Inbox; frozen: Promise<void>; thaw: () => void } {
  const frozen = deferred();
  const thawed = deferred();
  let cold = false;
  const hang = (): Promise<never> => {
    const never = thawed.promise.then(() => Promise.reject(new Error('the worker was killed')));
    never.catch(() => undefined); // what the frozen worker no longer awaits fails unseen
    return never;
  };
  const wrap = <T extends object>(target: T, on: (property: string | symbol, args: unknown[]) => unknown): T =>
    new Proxy(target, {
      get(t, property) {
        const value: unknown = Reflect.get(t, property, t);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const answer = on(property, args);
          return answer === undefined ? (value as (...a: unknown[]) => unknown).apply(t, args) : answer;
        };
      },
    });
  const frozenStore = wrap(store, (property, args) => {
    if (property === 'close') return undefined;
    if (!cold && property === 'save' && freezesOn(args[1] as SessionCheckpointV1)) {
      cold = true;
      frozen.resolve();
    }
    return cold ? hang() : undefined;
  });
  const frozenInbox = wrap(inbox, (property) => {
    if (!cold || property === 'close' || property === 'onNotify') return undefined;
    if (property === 'renew') return Promise.resolve(false);
    if (property === 'acquire') return Promise.resolve([]);
    return hang();
  });
  return { store: frozenStore, inbox: frozenInbox, frozen: frozen.promise, thaw: () => thawed.resolve() };
}

describe.each([
  ['MemoryInbox', file.memory],
  ['SqliteInbox', file.sqlite],
] as const)('crash windows over %s', (_name, makeStorage) => {
  it("a kill between a rewind entry's save and its putOutcome: the next worker stores the outcome the rewind's save recorded", async () => {
    const storage = makeStorage();
    const producer = runnerOn(storage, { worker: false });
    let rewinding = false;
    const first = dying(storage.inbox(), (method) => method === 'putOutcome' && rewinding);
    const worker = dyingWorker(storage, first.inbox);
    expect((await producer.runner.handle({ channel: 'cli', text: 'one' })).status).toBe('completed');
    expect((await producer.runner.handle({ channel: 'cli', text: 'two' })).status).toBe('completed');
    rewinding = true;
    const rewound = producer.runner.rewind(KEY, 1);
    await first.died;
    await worker.close();
    // The rewind's save settled the entry (inboxSeq) and recorded its outcome beside it.
    const saved = (await producer.store.load(KEY))?.data as Record<string, unknown>;
    expect(saved.inboxSeq).toBe('3');
    expect(saved.inboxOutcomes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ seq: '3', outcome: expect.objectContaining({ status: 'completed' }) }),
      ]),
    );
    runnerOn(storage);
    // Without the recorded outcome, the next worker would acknowledge the settled entry with no
    // outcome stored, and the producer's wait would end OUTCOME_EXPIRED.
    const view = await rewound;
    expect(view).toMatchObject({ sessionKey: KEY, version: 3 });
    expect(view.history.map((m) => m.content)).toEqual(['one', 're: one']);
    expect(await historyOf(producer.store)).toEqual(['user:one', 'assistant:re: one']);
  });

  it('a delete entry redelivered after its ack was lost is settled with the outcome stored before, deleting nothing again', async () => {
    const storage = makeStorage();
    const producer = runnerOn(storage, { worker: false });
    const first = dying(
      storage.inbox(),
      (method, [entry]) => method === 'ack' && (entry as InboxEntry).control === 'delete',
    );
    const worker = dyingWorker(storage, first.inbox);
    expect((await producer.runner.handle({ channel: 'cli', text: 'old' })).status).toBe('completed');
    const template = 'agent:main:template';
    expect((await producer.runner.dispatch(template, user('template'))).status).toBe('completed');
    // The delete is applied and its outcome stored; its acknowledgement is lost with the worker.
    await producer.runner.deleteSession(KEY);
    await first.died;
    await worker.close();
    expect(await producer.store.load(KEY)).toBeUndefined();
    // The key is free: a new session is forked into it.
    await producer.runner.fork(template, KEY);
    expect(await historyOf(producer.store)).toEqual(['user:template', 'assistant:re: template']);
    // The next worker gets the delete again: it must not delete the new session.
    const acked = deferred();
    const inbox = storage.inbox();
    const watched = new Proxy(inbox, {
      get(target, property) {
        if (property === 'ack') {
          return async (entry: InboxEntry) => {
            await target.ack(entry);
            if (entry.control === 'delete') acked.resolve();
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const next = runnerOn(storage, { inbox: watched });
    await acked.promise;
    expect(await historyOf(next.store)).toEqual(['user:template', 'assistant:re: template']);
    // The key goes on: a new entry is applied on the forked session.
    expect((await producer.runner.dispatch(KEY, user('after'))).status).toBe('completed');
    expect(await historyOf(next.store)).toEqual([
      'user:template',
      'assistant:re: template',
      'user:after',
      'assistant:re: after',
    ]);
  });

  it("a kill between a collect batch's settling save and putOutcome: each member gets its own outcome (its action, mergedWith), as a live caller would", async () => {
    const storage = makeStorage();
    const started = deferred();
    const hold: Deferred<TurnResult> = deferred();
    let turns = 0;
    const engine: EngineFn = () => {
      if (++turns > 1) return Promise.resolve({ output: 'both', messages: [{ role: 'assistant', content: 'both' }] });
      started.resolve();
      return hold.promise;
    };
    const agent = { id: 'main', whenBusy: 'collect' as const, engine };
    const producer = runnerOn(storage, { worker: false });
    const doomed = new Set<string>();
    const first = dying(
      storage.inbox(),
      (method, [receiptId]) => method === 'putOutcome' && doomed.has(receiptId as string),
    );
    const worker = dyingWorker(storage, first.inbox, agent);
    const a = await producer.runner.accept(KEY, user('a'));
    await started.promise;
    const b = await producer.runner.accept(KEY, user('b'));
    const c = await producer.runner.accept(KEY, user('c'));
    doomed.add(b.receiptId).add(c.receiptId);
    while ((await worker.session(KEY))?.queued !== 2) await new Promise((r) => setTimeout(r, 5));
    hold.resolve({ messages: [{ role: 'assistant', content: 'answered a' }] });
    await first.died;
    await worker.close();
    expect((await producer.runner.outcome(a.receiptId)).status).toBe('completed');
    runnerOn(storage, { agents: [agent] });
    for (const receipt of [b, c]) {
      const outcome = await producer.runner.outcome(receipt.receiptId, { timeoutMs: 5000 });
      expect(outcome).toMatchObject({
        status: 'completed',
        output: 'both',
        mergedWith: 2,
        action: { type: 'continue' },
      });
    }
    expect(turns).toBe(2); // nothing applied again
  });

  it("a kill between a collect batch member's own save and the merged turn's: the merged members still get their turn, the member applied on its own is not applied again", async () => {
    const storage = makeStorage();
    const started = deferred();
    const hold: Deferred<TurnResult> = deferred();
    const seen: string[][] = [];
    const engine: EngineFn = (ctx) => {
      const texts = ctx.signals.map((s) => String((s.payload as { text?: unknown }).text));
      seen.push(texts);
      if (seen.length === 1) {
        started.resolve();
        return hold.promise;
      }
      const said = texts.join('+');
      return Promise.resolve({ output: said, messages: [{ role: 'assistant', content: `answered ${said}` }] });
    };
    const agent: RunnerOptions['agents'][number] = {
      id: 'main',
      whenBusy: 'collect',
      engine,
      routes: [
        {
          kind: 'user_message',
          name: 'no-commands',
          predicate: (s) => (s.payload as { text?: unknown }).text === 'cmd',
          action: Action.reject('commands are off'),
        },
      ],
    };
    const producer = runnerOn(storage, { worker: false });
    // The worker freezes as the merged turn of b and d is saved: after the save of cmd (applied on
    // its own, in its place, with b's message before it), before the turn answering b and d.
    const cold = freezing(storage.store(), storage.inbox(), (data) =>
      (data.history ?? []).some((m) => m.content === 'answered b+d'),
    );
    const worker = createRunner({
      agents: [agent],
      store: cold.store,
      inbox: cold.inbox,
      worker: { id: 'frozen', pollMs: 20, leaseMs: 150 },
      closeTimeoutMs: 50,
    });
    track(async () => {
      cold.thaw();
      await worker.close();
    });
    const a = await producer.runner.accept(KEY, user('a'));
    await started.promise;
    const b = await producer.runner.accept(KEY, user('b'));
    const cmd = await producer.runner.accept(KEY, user('cmd'));
    const d = await producer.runner.accept(KEY, user('d'));
    while ((await worker.session(KEY))?.queued !== 3) await new Promise((r) => setTimeout(r, 5));
    hold.resolve({ messages: [{ role: 'assistant', content: 'answered a' }] });
    await cold.frozen;
    expect(seen).toEqual([['a'], ['b', 'd']]);
    runnerOn(storage, { agents: [agent] });
    const outcomes = await Promise.all(
      [a, b, cmd, d].map((r) => producer.runner.outcome(r.receiptId, { timeoutMs: 5000 })),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed', 'rejected', 'completed']);
    // b and d are answered once more by the next worker (the frozen one's answer was never saved);
    // cmd's rejection was saved: it is neither applied again nor given to an engine.
    expect(seen.slice(2).flat()).toEqual(['b', 'd']);
    expect(await historyOf(producer.store)).toEqual([
      'user:a',
      'assistant:answered a',
      'user:b',
      'user:cmd',
      'user:d',
      'assistant:answered b+d',
    ]);
  });

  it('a worker that lost its lease takes the key again, meets entries it settled (their putOutcome still pending) and saves more than 8 others: their outcomes outlive those saves', async () => {
    const storage = makeStorage();
    const turns: string[] = [];
    const engine: EngineFn = (ctx) => {
      turns.push(String((ctx.signal.payload as { text?: unknown }).text));
      return Promise.resolve({ output: { n: turns.length }, messages: [{ role: 'assistant', content: 'ok' }] });
    };
    // Every outcome the worker stores hangs until it dies. Its first lease is lost (its renewal
    // fails), and it takes the key again once that lease expired (`retake`).
    const stuck = deferred();
    const lost = deferred();
    const death = deferred();
    const retake = deferred();
    let leases = 0;
    const real = storage.inbox();
    const inbox = new Proxy(real, {
      get(target, property) {
        if (property === 'putOutcome' || property === 'settle') {
          return () => {
            stuck.resolve();
            return death.promise.then(() => Promise.reject(new Error('the process died')));
          };
        }
        if (property === 'renew' && leases === 1) {
          return () => {
            lost.resolve();
            return Promise.resolve(false);
          };
        }
        if (property === 'acquire') {
          return async (...args: unknown[]) => {
            if (leases === 1) await retake.promise;
            const taken = await (target.acquire as (...a: unknown[]) => Promise<unknown[]>).apply(target, args);
            leases += taken.length;
            return taken;
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const producer = runnerOn(storage, { worker: false });
    const texts = Array.from({ length: 14 }, (_, i) => `m${i + 1}`);
    const receipts = [];
    for (const text of texts.slice(0, 4)) receipts.push(await producer.runner.accept(KEY, user(text)));
    const first = dyingWorker(storage, inbox, { id: 'main', engine });
    await stuck.promise;
    while ((await inboxSeqOf(producer.store)) !== '4') await new Promise((r) => setTimeout(r, 5));
    await lost.promise;
    // Meanwhile, more entries than a save keeps outcomes of (8); then the worker takes the key again.
    for (const text of texts.slice(4)) receipts.push(await producer.runner.accept(KEY, user(text)));
    retake.resolve();
    while ((await inboxSeqOf(producer.store)) !== '14') await new Promise((r) => setTimeout(r, 5));
    death.resolve();
    await first.close();
    const second = runnerOn(storage, { agents: [{ id: 'main', engine }] });
    const outcomes = await Promise.all(receipts.map((r) => second.runner.outcome(r.receiptId, { timeoutMs: 5000 })));
    expect(outcomes.map((o) => [o.status, o.output])).toEqual(texts.map((_, i) => ['completed', { n: i + 1 }]));
    expect(turns).toEqual(texts); // nothing applied again
  });
});
