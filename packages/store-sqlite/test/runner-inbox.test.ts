// A Runner over a durable inbox (inbox.md), on MemoryInbox + MemoryCheckpointStore and on
// SqliteInbox + SqliteCheckpointStore over one temp file: accept → a worker settles → outcome,
// in order, exactly once, across runners that stop, stall and close.
import {
  MemoryCheckpointStore,
  signal,
  type CheckpointStore,
  type Inbox,
  type InboxEntry,
  type InboxLease,
  type OutcomeJson,
  type SessionCheckpointV1,
} from '@signalyard/core';
import { SqliteInbox } from '@signalyard/store-sqlite';
import { approvalEngine, collect, deferred, rejectsCode, type Deferred } from '@signalyard/test-utils';
import { createRunner, type EngineFn, type TurnContext, type TurnResult } from 'signalyard';
import { describe, expect, it } from 'vitest';
import { KEY, historyOf, inboxSeqOf, runnerInboxFile, user } from './runner-inbox-support.js';

const file = runnerInboxFile('signalyard-runner-inbox-');
const { runnerOn, dyingWorker, track } = file;
const textOf = (ctx: TurnContext): string => String((ctx.signal.payload as { text?: unknown }).text);

/** An inbox read that finds nothing. */
async function* nothing(): AsyncGenerator<InboxEntry> {
  // nothing to yield
}

/** An engine answering `re: <text>`, counting its turns. */
function echo(): { engine: EngineFn; turns: string[] } {
  const turns: string[] = [];
  return {
    turns,
    engine: (ctx) => {
      turns.push(textOf(ctx));
      return Promise.resolve({ messages: [{ role: 'assistant', content: `re: ${textOf(ctx)}` }] });
    },
  };
}

describe.each([
  ['MemoryInbox', file.memory],
  ['SqliteInbox', file.sqlite],
] as const)('a Runner over %s', (_name, makeStorage) => {
  it('accept → outcome, dispatch and handle settle through the worker; inboxSeq advances in the same save', async () => {
    const storage = makeStorage();
    const { engine, turns } = echo();
    const { runner, store } = runnerOn(storage, engine);
    const receipt = await runner.accept(KEY, user('one'));
    expect(receipt).toMatchObject({ sessionKey: KEY, seq: '1' });
    const outcome = await runner.outcome(receipt.receiptId);
    expect(outcome).toMatchObject({ status: 'completed', sessionKey: KEY, agentId: 'main' });
    expect((await runner.handle({ channel: 'cli', text: 'two' })).status).toBe('completed');
    // A signal that saves nothing today saves a version that only advances inboxSeq.
    expect((await runner.dispatch(KEY, signal('timer', null))).status).toBe('unrouted');
    expect(turns).toEqual(['one', 'two']);
    expect(await historyOf(store)).toEqual(['user:one', 'assistant:re: one', 'user:two', 'assistant:re: two']);
    expect(await inboxSeqOf(store)).toBe('3');
  });

  it("keeps one runner's accepts in call order per key and settles each exactly once", async () => {
    const storage = makeStorage();
    const { engine, turns } = echo();
    const { runner, store } = runnerOn(storage, engine);
    const texts = Array.from({ length: 12 }, (_, i) => `m${i}`);
    const receipts = await Promise.all(texts.map((t) => runner.accept(KEY, user(t))));
    expect(receipts.map((r) => r.seq)).toEqual(texts.map((_, i) => String(i + 1)));
    const outcomes = await Promise.all(receipts.map((r) => runner.outcome(r.receiptId)));
    expect(outcomes.every((o) => o.status === 'completed')).toBe(true);
    expect(turns).toEqual(texts);
    expect((await historyOf(store)).filter((m) => m.startsWith('user:'))).toEqual(texts.map((t) => `user:${t}`));
  });

  it('acknowledges without applying an entry at or below the checkpoint inboxSeq (a settle whose ack was lost)', async () => {
    const storage = makeStorage();
    const producer = runnerOn(storage, echo().engine, { worker: false });
    const first = await producer.runner.accept(KEY, user('settled already'));
    const second = await producer.runner.accept(KEY, user('new'));
    const store = producer.store;
    await store.save(
      KEY,
      { v: 1, agentId: 'main', strategy: { type: 'direct' }, history: [], engine: undefined, inboxSeq: first.seq },
      0,
    );
    const { engine, turns } = echo();
    const worker = runnerOn(storage, engine);
    expect((await worker.runner.outcome(second.receiptId)).status).toBe('completed');
    expect(turns).toEqual(['new']);
    await rejectsCode(worker.runner.outcome(first.receiptId, { timeoutMs: 200 }), 'OUTCOME_EXPIRED');
  });

  it.each([
    ['a turn (its own settling save)', user('pay'), 'completed', 1],
    ['an unrouted signal (a save only advancing inboxSeq)', signal('timer', null), 'unrouted', 0],
  ] as const)(
    'a kill between the settling save and putOutcome (%s): the next worker stores the outcome the save recorded, applying nothing again',
    async (_what, sent, status, turnsExpected) => {
      const storage = makeStorage();
      const turns: string[] = [];
      const engine: EngineFn = (ctx) => {
        turns.push(textOf(ctx));
        return Promise.resolve({ output: { paid: 1 }, messages: [{ role: 'assistant', content: 'done' }] });
      };
      // The first worker dies right after its settling save: its putOutcome never stores anything.
      const real = storage.inbox();
      const died = deferred();
      const dying = new Proxy(real, {
        get(target, property) {
          // Inbox.settle stores the outcome with the ack: killed before it, nothing is stored either.
          if (property === 'putOutcome' || property === 'settle') {
            return () => {
              died.resolve();
              return Promise.reject(new Error('killed before putOutcome'));
            };
          }
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const producer = runnerOn(storage, engine, { worker: false });
      const first = dyingWorker(storage, dying, { id: 'main', engine });
      const receipt = await producer.runner.accept(KEY, sent);
      await died.promise;
      await first.close();
      const saved = (await producer.store.load(KEY))?.data as Record<string, unknown>;
      expect(saved.inboxSeq).toBe('1');
      expect(saved.inboxOutcomes).toEqual([
        { receiptId: receipt.receiptId, seq: '1', outcome: expect.objectContaining({ status }) as unknown },
      ]);
      // No outcome stored: without the recorded one, it would stay missing for good.
      await rejectsCode(producer.runner.outcome(receipt.receiptId, { timeoutMs: 100 }), 'OUTCOME_TIMEOUT');
      const second = runnerOn(storage, engine);
      const outcome = await second.runner.outcome(receipt.receiptId);
      expect(outcome).toMatchObject({ status, sessionKey: KEY, agentId: 'main' });
      if (status === 'completed') expect(outcome.output).toEqual({ paid: 1 });
      expect((await producer.runner.outcome(receipt.receiptId)).status).toBe(status);
      expect(turns).toHaveLength(turnsExpected);
      const history = await historyOf(second.store);
      expect(history).toEqual(status === 'completed' ? ['user:pay', 'assistant:done'] : []);
      // Settled (acknowledged): a later entry is applied after it, once.
      const next = await producer.runner.accept(KEY, user('next'));
      expect((await second.runner.outcome(next.receiptId)).status).toBe('completed');
      expect(await inboxSeqOf(second.store)).toBe('2');
      // The save settling the next entry records its outcome; the first entry's, stored by now
      // (the wait above saw it), is not carried on: the store answers for it.
      expect(((await second.store.load(KEY))?.data as Record<string, unknown>).inboxOutcomes).toEqual([
        { receiptId: next.receiptId, seq: '2', outcome: expect.objectContaining({ status: 'completed' }) as unknown },
      ]);
    },
  );

  it("a kill between a collect batch's settling save and putOutcome: the next worker stores the outcome the save recorded for every member", async () => {
    const storage = makeStorage();
    const turns: string[] = [];
    const started = deferred();
    const hold: Deferred<TurnResult> = deferred();
    const engine: EngineFn = (ctx) => {
      turns.push(ctx.signals.map((s) => (s.payload as { text: string }).text).join('+'));
      if (turns.length === 1) {
        started.resolve();
        return hold.promise;
      }
      return Promise.resolve({ messages: [{ role: 'assistant', content: 'both' }] });
    };
    // The first worker dies once the batch's turn is saved: no putOutcome of the batch stores anything.
    const real = storage.inbox();
    const doomed = new Set<string>();
    const died = deferred();
    const inbox = new Proxy(real, {
      get(target, property) {
        if (property === 'putOutcome') {
          return (receiptId: string, ...rest: [OutcomeJson, number]) => {
            if (!doomed.has(receiptId)) return target.putOutcome(receiptId, ...rest);
            died.resolve();
            return Promise.reject(new Error('killed before putOutcome'));
          };
        }
        if (property === 'settle') {
          return (entry: InboxEntry, ...rest: [OutcomeJson, number]) => {
            if (!doomed.has(entry.receiptId)) return target.settle?.(entry, ...rest);
            died.resolve();
            return Promise.reject(new Error('killed before settle'));
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const producer = runnerOn(storage, engine, { worker: false });
    const first = dyingWorker(storage, inbox, { id: 'main', whenBusy: 'collect', engine });
    await producer.runner.accept(KEY, user('a'));
    await started.promise;
    const b = await producer.runner.accept(KEY, user('b'));
    const c = await producer.runner.accept(KEY, user('c'));
    doomed.add(b.receiptId).add(c.receiptId);
    while ((await first.session(KEY))?.queued !== 2) await new Promise((r) => setTimeout(r, 5));
    hold.resolve({ messages: [{ role: 'assistant', content: 'answered a' }] });
    await died.promise;
    await first.close();
    expect(turns).toEqual(['a', 'b+c']);
    expect(await inboxSeqOf(producer.store)).toBe('3');
    const second = runnerOn(storage, engine, { agents: [{ id: 'main', whenBusy: 'collect', engine }] });
    for (const receipt of [b, c]) {
      expect((await second.runner.outcome(receipt.receiptId, { timeoutMs: 5000 })).status).toBe('completed');
    }
    expect(turns).toEqual(['a', 'b+c']); // nothing applied again
    expect(await historyOf(second.store)).toEqual([
      'user:a',
      'assistant:answered a',
      'user:b',
      'user:c',
      'assistant:both',
    ]);
  });

  it("a crash after later saves but before an earlier entry's putOutcome: the outcome outlives those saves (each later save records it until it is stored)", async () => {
    const storage = makeStorage();
    const turns: string[] = [];
    const engine: EngineFn = (ctx) => {
      turns.push(textOf(ctx));
      return Promise.resolve({ output: { n: turns.length }, messages: [{ role: 'assistant', content: 'ok' }] });
    };
    // The first worker's putOutcome never returns (the process is about to die): the session's
    // next entries are applied and saved meanwhile, their outcomes queued behind it.
    const real = storage.inbox();
    const stuck = deferred();
    const death = deferred();
    let dead = false;
    const inbox = new Proxy(real, {
      get(target, property) {
        if (property === 'putOutcome' || property === 'settle') {
          return () => {
            stuck.resolve();
            return death.promise.then(() => Promise.reject(new Error('the process died')));
          };
        }
        // Dead, it renews no lease and takes none: another worker takes the key over once the lease expires.
        if (property === 'renew') return () => Promise.resolve(false);
        if (property === 'acquire' && dead) return () => Promise.resolve([]);
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const producer = runnerOn(storage, engine, { worker: false });
    // More entries than the last saves' outcomes kept (8): every unstored one must be recorded.
    const texts = Array.from({ length: 12 }, (_, i) => `m${i + 1}`);
    const receipts = [];
    for (const text of texts) receipts.push(await producer.runner.accept(KEY, user(text)));
    const first = dyingWorker(storage, inbox, { id: 'main', engine });
    await stuck.promise;
    while ((await inboxSeqOf(producer.store)) !== '12') await new Promise((r) => setTimeout(r, 5));
    dead = true;
    death.resolve();
    await first.close();
    const second = runnerOn(storage, engine);
    const outcomes = await Promise.all(receipts.map((r) => second.runner.outcome(r.receiptId, { timeoutMs: 5000 })));
    expect(outcomes.map((o) => [o.status, o.output])).toEqual(texts.map((_, i) => ['completed', { n: i + 1 }]));
    expect(turns).toEqual(texts); // nothing applied again
  });

  it('a worker: false producer gets the outcome a worker runner settled, rebuilt from its JSON', async () => {
    const storage = makeStorage();
    const producer = runnerOn(storage, echo().engine, { worker: false });
    const { engine, turns } = echo();
    runnerOn(storage, engine);
    const outcome = await producer.runner.handle({ channel: 'cli', text: 'from the web tier' });
    expect(outcome).toMatchObject({ status: 'completed', sessionKey: KEY });
    expect(turns).toEqual(['from the web tier']);
  });

  it('a settling save does not carry on the outcomes of entries already stored: the checkpoint stays small', async () => {
    const storage = makeStorage();
    const producer = runnerOn(storage, echo().engine, { worker: false });
    runnerOn(storage, echo().engine);
    let last;
    for (let i = 1; i <= 12; i++) {
      last = await producer.runner.accept(KEY, user(`m${String(i)}`));
      expect((await producer.runner.outcome(last.receiptId)).status).toBe('completed');
    }
    // Each entry's outcome was stored before the next entry's save: only the last one is recorded.
    const saved = (await producer.store.load(KEY))?.data as { inboxSeq?: string; inboxOutcomes?: { seq: string }[] };
    expect(saved.inboxSeq).toBe('12');
    expect(saved.inboxOutcomes?.map((o) => o.seq)).toEqual(['12']);
  });

  it('dedupes accepts by id: the same receipt, one entry, one turn', async () => {
    const storage = makeStorage();
    const { engine, turns } = echo();
    const { runner } = runnerOn(storage, engine, { worker: false });
    const a = await runner.accept(KEY, user('once'), { id: 'request-1' });
    const b = await runner.accept(KEY, user('once'), { id: 'request-1' });
    expect(b).toEqual(a);
    const worker = runnerOn(storage, engine);
    expect((await worker.runner.outcome(a.receiptId)).status).toBe('completed');
    expect(turns).toEqual(['once']);
  });

  it('a fresh runner over a store written without an inbox (no inboxSeq) keeps the history and goes on', async () => {
    const storage = makeStorage();
    const store = storage.store();
    const plain = createRunner({ agents: [{ id: 'main', engine: echo().engine }], store });
    await plain.handle({ channel: 'cli', text: 'before' });
    await plain.close();
    expect(await inboxSeqOf(store)).toBeUndefined();
    const { runner } = runnerOn(storage, echo().engine);
    expect((await runner.handle({ channel: 'cli', text: 'after' })).status).toBe('completed');
    expect(await historyOf(store)).toEqual([
      'user:before',
      'assistant:re: before',
      'user:after',
      'assistant:re: after',
    ]);
    expect(await inboxSeqOf(store)).toBe('1');
  });

  it('poisons an entry delivered more than maxDeliveries times: its user message saved, failed INBOX_POISONED, no engine', async () => {
    const storage = makeStorage();
    const inbox = storage.inbox();
    const producer = runnerOn(storage, echo().engine, { worker: false });
    const receipt = await producer.runner.accept(KEY, user('crashes every worker'));
    // Two deliveries that died (their leases expired without a settle).
    for (let death = 0; death < 2; death++) await dieHolding(inbox);
    const { engine, turns } = echo();
    const worker = runnerOn(storage, engine, { worker: { pollMs: 20, maxDeliveries: 2 } });
    const outcome = await worker.runner.outcome(receipt.receiptId);
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('INBOX_POISONED');
    expect(turns).toEqual([]);
    expect(await historyOf(worker.store)).toEqual(['user:crashes every worker']);
    const dead = await collect(worker.runner.deadLetters());
    expect(dead.map((d) => [d.receipt.receiptId, d.outcome.error?.code])).toEqual([
      [receipt.receiptId, 'INBOX_POISONED'],
    ]);
  });

  it('a collect batch gives back a member delivered more than maxDeliveries times: poisoned on its own, the engine never sees it', async () => {
    const storage = makeStorage();
    const inbox = storage.inbox();
    const producer = runnerOn(storage, echo().engine, { worker: false });
    const a = await producer.runner.accept(KEY, user('a'));
    const b = await producer.runner.accept(KEY, user('b'));
    // Two deliveries of "b" alone that died (their leases expired without a settle).
    for (let death = 0; death < 2; death++) await dieHolding(inbox, b.seq);
    const seen: string[][] = [];
    const engine: EngineFn = (ctx) => {
      seen.push(ctx.signals.map((s) => String((s.payload as { text?: unknown }).text)));
      return Promise.resolve({ messages: [{ role: 'assistant', content: 'answered' }] });
    };
    const worker = runnerOn(storage, engine, {
      agents: [{ id: 'main', whenBusy: 'collect', engine }],
      worker: { pollMs: 20, maxDeliveries: 2 },
    });
    expect((await worker.runner.outcome(a.receiptId)).status).toBe('completed');
    const poisoned = await worker.runner.outcome(b.receiptId);
    expect(poisoned.error?.code).toBe('INBOX_POISONED');
    expect(seen).toEqual([['a']]);
    expect(await historyOf(worker.store)).toEqual(['user:a', 'assistant:answered', 'user:b']);
    expect(await inboxSeqOf(worker.store)).toBe('2');
  });

  it('a stalled worker whose lease expired: another worker settles the entry, the late save is refused', async () => {
    const storage = makeStorage();
    const started = deferred();
    const release: Deferred<TurnResult> = deferred();
    const turns: string[] = [];
    const stalled = runnerOn(
      storage,
      (ctx) => {
        turns.push(`stalled:${textOf(ctx)}`);
        started.resolve();
        return release.promise;
      },
      { worker: { id: 'stalled', pollMs: 20, leaseMs: 150 } },
    );
    // Once it holds the lease, its calls to the inbox never answer: a worker paused (or
    // partitioned) past leaseMs. (MemoryInbox: one object for both runners, so only its own calls.)
    const inbox = stalled.inbox;
    const { renew, acquire } = { renew: inbox.renew.bind(inbox), acquire: inbox.acquire.bind(inbox) };
    const paused = <T>(): Promise<T> => new Promise<T>(() => undefined);
    let holding = false;
    inbox.renew = (lease) => (lease.workerId === 'stalled' ? paused() : renew(lease));
    inbox.acquire = async (id, opts) => {
      if (id === 'stalled' && holding) return paused();
      const leases = await acquire(id, opts);
      if (id === 'stalled' && leases.length > 0) holding = true;
      return leases;
    };
    const receipt = await stalled.runner.accept(KEY, user('once only'));
    await started.promise;
    const rescuer = runnerOn(storage, (ctx) => {
      turns.push(`rescuer:${textOf(ctx)}`);
      return Promise.resolve({ messages: [{ role: 'assistant', content: 'rescued' }] });
    });
    const outcome = await rescuer.runner.outcome(receipt.receiptId);
    expect(outcome.error).toBeUndefined();
    expect(outcome.status).toBe('completed');
    release.resolve({ messages: [{ role: 'assistant', content: 'too late' }] });
    // The stalled worker's save conflicts, reloads, and finds the entry settled.
    await stalled.runner.close();
    expect(turns).toEqual(['stalled:once only', 'rescuer:once only']);
    expect(await historyOf(rescuer.store)).toEqual(['user:once only', 'assistant:rescued']);
  });

  it('a kill between ctx.commit and the final save: the next worker re-applies from the commit, the user message once', async () => {
    const storage = makeStorage();
    const committed = deferred();
    const first = runnerOn(
      storage,
      async (ctx) => {
        await ctx.commit({ claimed: 'call-1' });
        committed.resolve();
        return new Promise<TurnResult>(() => undefined); // killed before its final save
      },
      { closeTimeoutMs: 1 },
    );
    const receipt = await first.runner.accept(KEY, user('pay the invoice'));
    await committed.promise;
    expect((await first.store.load(KEY))?.data).toMatchObject({
      inboxPartial: { seq: '1', receiptId: receipt.receiptId },
    });
    await first.runner.close(); // its turn aborted after closeTimeoutMs: nothing more saved; the lease released
    const seen: unknown[] = [];
    const second = runnerOn(storage, (ctx) => {
      seen.push({ state: ctx.state, history: ctx.history.map((m) => m.content) });
      const claimed = (ctx.state as { claimed?: string } | undefined)?.claimed;
      const content = claimed === undefined ? 'paid' : `${claimed}: outcome unknown: not retried`;
      return Promise.resolve({ messages: [{ role: 'assistant', content }], state: {} });
    });
    expect((await second.runner.outcome(receipt.receiptId)).status).toBe('completed');
    expect(seen).toEqual([{ state: { claimed: 'call-1' }, history: ['pay the invoice'] }]);
    expect(await historyOf(second.store)).toEqual([
      'user:pay the invoice',
      'assistant:call-1: outcome unknown: not retried',
    ]);
    const data = (await second.store.load(KEY))?.data as Record<string, unknown>;
    expect(data.inboxSeq).toBe('1');
    expect(data.inboxPartial).toBeUndefined();
  });

  it("a stalled worker whose commit lost to the rescuer's commit of the same entry: re-applied from it, the user message once", async () => {
    const storage = makeStorage();
    const started = deferred();
    const release = deferred();
    const rescuerCommitted = deferred();
    const seen: string[] = [];
    const stalled = runnerOn(
      storage,
      async (ctx) => {
        const claimed = (ctx.state as { claimed?: string } | undefined)?.claimed;
        seen.push(`stalled:${claimed ?? 'none'}:${ctx.history.map((m) => m.content).join('|')}`);
        if (claimed !== undefined)
          return { messages: [{ role: 'assistant', content: `${claimed}: outcome unknown: not retried` }], state: {} };
        fed = true;
        started.resolve();
        await release.promise;
        await ctx.commit({ claimed: 'stalled' }); // conflicts: the rescuer committed first
        return { messages: [{ role: 'assistant', content: 'paid' }], state: {} };
      },
      { worker: { id: 'stalled', pollMs: 20, leaseMs: 150 } },
    );
    // Once it holds the lease, its renewals and acquisitions never answer and its reads find
    // nothing more: it never learns the loss. (MemoryInbox: one object for both runners.)
    const inbox = stalled.inbox;
    const { renew, acquire, read } = {
      renew: inbox.renew.bind(inbox),
      acquire: inbox.acquire.bind(inbox),
      read: inbox.read.bind(inbox),
    };
    const paused = <T>(): Promise<T> => new Promise<T>(() => undefined);
    let holding = false;
    inbox.renew = (lease) => (lease.workerId === 'stalled' ? paused() : renew(lease));
    let fed = false;
    inbox.read = (lease, after) => (lease.workerId === 'stalled' && fed ? nothing() : read(lease, after));
    inbox.acquire = async (id, opts) => {
      if (id === 'stalled' && holding) return paused();
      const leases = await acquire(id, opts);
      if (id === 'stalled' && leases.length > 0) holding = true;
      return leases;
    };
    const receipt = await stalled.runner.accept(KEY, user('pay'));
    await started.promise;
    // The rescuer takes the expired lease, commits its claim, and dies before its final save.
    const rescuer = runnerOn(
      storage,
      async (ctx) => {
        seen.push(`rescuer:${ctx.history.map((m) => m.content).join('|')}`);
        await ctx.commit({ claimed: 'rescuer' });
        rescuerCommitted.resolve();
        return new Promise<TurnResult>(() => undefined);
      },
      { closeTimeoutMs: 1 },
    );
    await rescuerCommitted.promise;
    release.resolve();
    expect((await stalled.runner.outcome(receipt.receiptId)).status).toBe('completed');
    expect(seen).toEqual(['stalled:none:pay', 'rescuer:pay', 'stalled:rescuer:pay']);
    expect(await historyOf(stalled.store)).toEqual(['user:pay', 'assistant:rescuer: outcome unknown: not retried']);
    expect(await inboxSeqOf(stalled.store)).toBe('1');
    await rescuer.runner.close();
  });

  it('a stop accepted by a producer stops the pending entries on the lease holder (graceful: the turn in flight ends)', async () => {
    const storage = makeStorage();
    const started = deferred();
    const release: Deferred<TurnResult> = deferred();
    const turns: string[] = [];
    const worker = runnerOn(storage, (ctx) => {
      turns.push(textOf(ctx));
      started.resolve();
      return release.promise;
    });
    const stoppedThere = deferred();
    worker.runner.on((event) => {
      if (event.type === 'outcome' && event.outcome.status === 'stopped') stoppedThere.resolve();
    });
    const producer = runnerOn(storage, echo().engine, { worker: false });
    const inFlight = await producer.runner.accept(KEY, user('in flight'));
    await started.promise;
    const waiting = await producer.runner.accept(KEY, user('waiting'));
    const stop = await producer.runner.accept(KEY, signal('stop', null));
    // The lease holder acts on the stop at once: the waiting entry is stopped while the turn runs.
    await stoppedThere.promise;
    release.resolve({ messages: [{ role: 'assistant', content: 'done' }] });
    expect((await producer.runner.outcome(inFlight.receiptId)).status).toBe('completed');
    expect((await producer.runner.outcome(waiting.receiptId)).status).toBe('stopped');
    expect((await producer.runner.outcome(stop.receiptId)).status).toBe('completed');
    expect(turns).toEqual(['in flight']);
    expect(await historyOf(worker.store)).toEqual(['user:in flight', 'assistant:done']);
    expect(await inboxSeqOf(worker.store)).toBe('3');
  });

  it('a stop settles the waiting entries at once on the lease holder; their outcomes are stored with the one save covering them all, never before it', async () => {
    const storage = makeStorage();
    const started = deferred();
    const release: Deferred<TurnResult> = deferred();
    let saves = 0;
    const store = countingStore(storage.store(), () => saves++);
    const stored: string[] = [];
    const inbox = storage.inbox();
    const watched = new Proxy(inbox, {
      get(target, property) {
        if (property === 'putOutcome') {
          return (receiptId: string, ...rest: [OutcomeJson, number]) => {
            stored.push(receiptId);
            return target.putOutcome(receiptId, ...rest);
          };
        }
        if (property === 'settle') {
          return (entry: InboxEntry, ...rest: [OutcomeJson, number]) => {
            stored.push(entry.receiptId);
            return target.settle?.(entry, ...rest);
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const worker = runnerOn(
      storage,
      () => {
        started.resolve();
        return release.promise;
      },
      { store, inbox: watched },
    );
    const stoppedHere: string[] = [];
    const bothStopped = deferred();
    worker.runner.on((event) => {
      if (event.type !== 'outcome' || event.outcome.status !== 'stopped') return;
      stoppedHere.push(String((event.signal?.payload as { text?: unknown } | undefined)?.text));
      if (stoppedHere.length === 2) bothStopped.resolve();
    });
    const producer = runnerOn(storage, echo().engine, { worker: false });
    const inFlight = await producer.runner.accept(KEY, user('in flight'));
    await started.promise;
    const waiting = [await producer.runner.accept(KEY, user('w1')), await producer.runner.accept(KEY, user('w2'))];
    const stop = await producer.runner.accept(KEY, signal('stop', null));
    // The lease holder acts at once: both are stopped while the turn in flight still runs ...
    await bothStopped.promise;
    await new Promise((resolve) => setImmediate(resolve)); // what the stop set off in microtasks has run
    expect(stoppedHere).toEqual(['w1', 'w2']);
    // ... but nothing is stored for them before a save covers them: a kill now must not leave a
    // `stopped` outcome behind for entries the next worker may apply.
    expect(stored.filter((id) => waiting.some((w) => w.receiptId === id))).toEqual([]);
    const before = saves;
    release.resolve({ messages: [{ role: 'assistant', content: 'done' }] });
    for (const receipt of waiting) expect((await producer.runner.outcome(receipt.receiptId)).status).toBe('stopped');
    expect((await producer.runner.outcome(inFlight.receiptId)).status).toBe('completed');
    expect((await producer.runner.outcome(stop.receiptId)).status).toBe('completed');
    await worker.runner.close();
    // The turn's own save, then one save advancing inboxSeq past the stopped entries and the stop,
    // recording their outcomes.
    expect(saves - before).toBe(2);
    expect(await inboxSeqOf(worker.store)).toBe('4');
    const recorded = (
      (await worker.store.load(KEY))?.data as { inboxOutcomes?: { receiptId: string; outcome: OutcomeJson }[] }
    ).inboxOutcomes;
    for (const receipt of waiting)
      expect(recorded?.find((o) => o.receiptId === receipt.receiptId)?.outcome.status).toBe('stopped');
    expect(await historyOf(worker.store)).toEqual(['user:in flight', 'assistant:done']);
  });

  it('rewind and deleteSession are control entries applied in seq order among pending entries; fork starts without inboxSeq', async () => {
    const storage = makeStorage();
    const { engine, turns } = echo();
    const { runner, store } = runnerOn(storage, engine);
    await runner.handle({ channel: 'cli', text: 'one' });
    await runner.handle({ channel: 'cli', text: 'two' });
    const three = await runner.accept(KEY, user('three'));
    const rewound = runner.rewind(KEY, 1); // accepted after "three", before "four"
    const four = runner.accept(KEY, user('four'));
    const view = await rewound;
    expect(view.history.map((m) => m.content)).toEqual(['one', 're: one']);
    expect((await runner.outcome(three.receiptId)).status).toBe('completed');
    expect((await runner.outcome((await four).receiptId)).status).toBe('completed');
    expect(turns).toEqual(['one', 'two', 'three', 'four']);
    expect(await historyOf(store)).toEqual(['user:one', 'assistant:re: one', 'user:four', 'assistant:re: four']);
    expect(await inboxSeqOf(store)).toBe('5');
    // A rewind as a control entry keeps (and advances) inboxSeq; a fork starts with none.
    const forked = await runner.fork(KEY, 'agent:main:forked');
    expect(forked.history.length).toBe(4);
    expect(await inboxSeqOf(store, 'agent:main:forked')).toBeUndefined();
    // A version that is not kept: the control entry fails with the rewind's own code.
    await rejectsCode(runner.rewind(KEY, 99), 'VERSION_UNAVAILABLE');
    const five = await runner.accept(KEY, user('five'));
    const deleted = runner.deleteSession(KEY);
    const six = await runner.accept(KEY, user('six'));
    await deleted;
    expect((await runner.outcome(five.receiptId)).status).toBe('completed');
    expect((await runner.outcome(six.receiptId)).status).toBe('completed');
    // After the delete the key's seq keeps growing; the new session holds only what came after.
    expect(six.seq).toBe('9');
    expect(await historyOf(store)).toEqual(['user:six', 'assistant:re: six']);
    expect(await inboxSeqOf(store)).toBe('9');
  });

  it('after a delete entry, an earlier entry whose ack was lost is never applied again on the new session', async () => {
    const storage = makeStorage();
    const producer = runnerOn(storage, echo().engine, { worker: false });
    const one = await producer.runner.accept(KEY, user('one'));
    const deleted = producer.runner.deleteSession(KEY);
    while ((await pendingSeqs(producer.inbox)).length < 2) await new Promise((r) => setTimeout(r, 5));
    // The worker settles "one" but dies before its ack (the ack is lost), then applies the delete.
    const inbox = storage.inbox();
    // An ack lost after the outcome was stored: the separate calls (Inbox.settle writes both at once).
    (inbox as { settle?: unknown }).settle = undefined;
    const ack = inbox.ack.bind(inbox);
    let lost = false;
    inbox.ack = async (entry) => {
      if (entry.receiptId === one.receiptId && !lost) {
        lost = true;
        return;
      }
      await ack(entry);
    };
    const { engine, turns } = echo();
    const worker = runnerOn(storage, engine, { inbox });
    expect((await producer.runner.outcome(one.receiptId)).status).toBe('completed');
    await deleted;
    expect(lost).toBe(true);
    expect(await worker.store.load(KEY)).toBeUndefined();
    await worker.runner.close();
    // A fresh worker: nothing at or below the delete's seq is left to apply; the key's seq grows on.
    const next = runnerOn(storage, engine);
    const two = await next.runner.accept(KEY, user('two'));
    expect(two.seq).toBe('3');
    expect((await next.runner.outcome(two.receiptId)).status).toBe('completed');
    expect(turns).toEqual(['one', 'two']);
    expect(await historyOf(next.store)).toEqual(['user:two', 'assistant:re: two']);
    expect(await pendingSeqs(next.inbox)).toEqual([]);
  });

  it('approvals over the inbox: paused crosses as JSON, approve is an entry, and a kill after the claim is answered outcome unknown', async () => {
    const storage = makeStorage();
    const claimed = deferred();
    let ran = 0;
    const tool = () => {
      ran++;
      return 'refunded';
    };
    const first = runnerOn(
      storage,
      approvalEngine({
        tool,
        beforeTool: () => {
          claimed.resolve();
          return new Promise(() => undefined); // killed between the claim's commit and the tool
        },
      }),
      { closeTimeoutMs: 1 },
    );
    const producer = runnerOn(storage, echo().engine, { worker: false });
    const paused = await producer.runner.handle({ channel: 'cli', text: '5 EUR' });
    expect(paused.status).toBe('paused');
    expect(paused.pendingApprovals?.map((p) => p.id)).toEqual(['ap-1']);
    const approving = producer.runner.approve(KEY, [{ id: 'ap-1', approved: true }]);
    await claimed.promise;
    await first.runner.close();
    runnerOn(storage, approvalEngine({ tool }));
    expect((await approving).status).toBe('completed');
    expect(ran).toBe(0);
    const history = await historyOf(first.store);
    expect(history.filter((m) => m === 'user:5 EUR')).toHaveLength(1);
    expect(history).toContain('tool:outcome unknown: not retried');
    expect(history.at(-1)).toBe('assistant:done: outcome unknown: not retried');
    expect(await inboxSeqOf(first.store)).toBe('2');
  });

  it('close() rejects pending waits with RUNNER_CLOSED, leaves unsettled entries, and releases its leases', async () => {
    const storage = makeStorage();
    const started = deferred();
    const first = runnerOn(storage, () => {
      started.resolve();
      return new Promise<TurnResult>(() => undefined);
    });
    const receipt = await first.runner.accept(KEY, user('survives close'));
    const waited = rejectsCode(first.runner.outcome(receipt.receiptId), 'RUNNER_CLOSED');
    await started.promise;
    await first.runner.close();
    await waited;
    await rejectsCode(first.runner.accept(KEY, user('after')), 'RUNNER_CLOSED');
    const { engine, turns } = echo();
    const second = runnerOn(storage, engine);
    expect((await second.runner.outcome(receipt.receiptId)).status).toBe('completed');
    expect(turns).toEqual(['survives close']);
    expect(await historyOf(second.store)).toEqual(['user:survives close', 'assistant:re: survives close']);
  });

  it('a collect batch: every member counted before the engine runs; a kill between two saves of the batch settles no member unsaved', async () => {
    const storage = makeStorage();
    const inboxA = storage.inbox();
    const counted: string[] = [];
    const begin = inboxA.beginDelivery.bind(inboxA);
    inboxA.beginDelivery = async (entry) => {
      counted.push(entry.receiptId);
      return begin(entry);
    };
    let dead = false;
    const renew = inboxA.renew.bind(inboxA);
    inboxA.renew = async (lease) => (dead && lease.workerId === 'A' ? false : renew(lease));
    // Dead, it takes no lease again either (else it would compete with the rescuer for the key).
    const acquire = inboxA.acquire.bind(inboxA);
    inboxA.acquire = async (workerId, opts) => (dead && workerId === 'A' ? [] : acquire(workerId, opts));
    // The process dies in the middle of the batch's saves: the save of "c"'s arrival never returns.
    const hung = deferred();
    const store = hangingStore(storage.store(), (data) => {
      const last = (data as SessionCheckpointV1).history.at(-1);
      if (last?.role !== 'user' || last.content !== 'c') return false;
      hung.resolve();
      return true;
    });
    const startedA = deferred();
    const holdA: Deferred<TurnResult> = deferred();
    let countedAtBatch: string[] = [];
    const a = createRunner({
      agents: [
        {
          id: 'main',
          whenBusy: 'collect',
          engine: (ctx) => {
            if (textOf(ctx) === 'a') {
              startedA.resolve();
              return holdA.promise;
            }
            countedAtBatch = [...counted];
            // An unstorable state: the batch's arrivals are saved one by one instead.
            return Promise.resolve({ messages: [{ role: 'assistant', content: 'lost' }], state: { bad: 1n } });
          },
        },
      ],
      store,
      inbox: inboxA,
      worker: { id: 'A', pollMs: 20, leaseMs: 150 },
    });
    await a.accept(KEY, user('a'));
    await startedA.promise;
    const b = await a.accept(KEY, user('b'));
    const c = await a.accept(KEY, user('c'));
    while ((await a.session(KEY))?.queued !== 2) await new Promise((r) => setTimeout(r, 5));
    holdA.resolve({ messages: [{ role: 'assistant', content: 'answered a' }] });
    await hung.promise;
    expect(countedAtBatch).toEqual(expect.arrayContaining([b.receiptId, c.receiptId]));
    dead = true; // its lease is not renewed any more: another worker takes the key over
    const { engine, turns } = echo();
    const second = runnerOn(storage, engine, { agents: [{ id: 'main', whenBusy: 'collect', engine }] });
    expect((await second.runner.outcome(c.receiptId, { timeoutMs: 5000 })).status).toBe('completed');
    expect(turns).toEqual(['c']);
    expect(await historyOf(second.store)).toEqual([
      'user:a',
      'assistant:answered a',
      'user:b',
      'user:c',
      'assistant:re: c',
    ]);
    expect(await inboxSeqOf(second.store)).toBe('3');
  });

  it('outcomes of every status cross processes as OutcomeJson and come back through runner.outcome', async () => {
    const storage = makeStorage();
    const producer = runnerOn(storage, echo().engine, { worker: false });
    runnerOn(storage, (ctx) => {
      if (textOf(ctx) === 'fail') return Promise.reject(new Error('engine down'));
      return Promise.resolve({ messages: [{ role: 'assistant', content: 'ok' }], output: { big: 'x'.repeat(10) } });
    });
    const completed = await producer.runner.handle({ channel: 'cli', text: 'fine' });
    expect(completed).toMatchObject({ status: 'completed', output: { big: 'xxxxxxxxxx' } });
    const failed = await producer.runner.handle({ channel: 'cli', text: 'fail' });
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('ENGINE_FAILED');
    expect(failed.error?.message).toContain('engine down');
    expect((await producer.runner.dispatch(KEY, signal('timer', null))).status).toBe('unrouted');
    const rejected = await producer.runner.approve(KEY, [{ id: 'nope', approved: true }]);
    expect(rejected.status).toBe('rejected');
    expect(rejected.action).toEqual({ type: 'reject', reason: 'no_pending_approval' });
  });
});

/** The seqs of the entries of KEY still in the inbox (taking and releasing the key's lease). */
async function pendingSeqs(inbox: Inbox): Promise<string[]> {
  for (let i = 0; i < 50; i++) {
    const [lease] = await inbox.acquire('probe', { leaseMs: 1000, max: 1 });
    if (lease === undefined) {
      await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    const seqs: string[] = [];
    for await (const entry of inbox.read(lease)) seqs.push(entry.seq);
    await inbox.release(lease);
    return seqs;
  }
  return [];
}

/** `store` calling `saved()` after each successful save. */
function countingStore(store: CheckpointStore, saved: () => void): CheckpointStore {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'save')
        return async (key: string, data: SessionCheckpointV1, expected: number) => {
          const version = await target.save(key, data, expected);
          saved();
          return version;
        };
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `store` whose save never returns (the process died in it) when `hangs(data)` says so. */
function hangingStore(store: CheckpointStore, hangs: (data: unknown) => boolean): CheckpointStore {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'save')
        return (key: string, data: unknown, expected: number) =>
          hangs(data) ? new Promise<never>(() => undefined) : target.save(key, data, expected);
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A worker that takes the lease, begins a delivery of every entry (or of the one `onlySeq`), and dies (its lease left to expire). */
async function dieHolding(inbox: Inbox, onlySeq?: string): Promise<void> {
  let leases: InboxLease[] = [];
  for (let i = 0; i < 200 && leases.length === 0; i++) {
    leases = await inbox.acquire('doomed', { leaseMs: 30, max: 1 });
    if (leases.length === 0) await new Promise((r) => setTimeout(r, 10));
  }
  const [lease] = leases;
  if (lease === undefined) throw new Error('no lease to die holding');
  for await (const entry of inbox.read(lease))
    if (onlySeq === undefined || entry.seq === onlySeq) await inbox.beginDelivery(entry);
}

describe('a Runner with a durable inbox: configuration', () => {
  it('a durable inbox other than MemoryInbox over a memory store (or none) is INBOX_CONFIG_INVALID', () => {
    const inbox = new SqliteInbox({ path: file.path('config') });
    track(() => inbox.close());
    const agents = [{ id: 'main', engine: echo().engine }];
    expect(() => createRunner({ agents, inbox })).toThrow(expect.objectContaining({ code: 'INBOX_CONFIG_INVALID' }));
    expect(() => createRunner({ agents, inbox, store: new MemoryCheckpointStore() })).toThrow(
      expect.objectContaining({ code: 'INBOX_CONFIG_INVALID' }),
    );
  });
});
