/**
 * The runners of the chaos children, whatever the transport: a transport's worker script opens
 * its inbox, store and effects and calls {@link serveChaosWorkerRunner} (a worker Runner with the
 * chaos agents of `./chaos-agents.ts` over the observed inbox); its producer script opens its
 * inbox and store and calls {@link serveChaosProducerRunner} (a Runner with `worker: false` that
 * accepts the chaos signals). This module imports no Signalyard code: the scripts pass in
 * `createRunner`, `crewEngine`, `scriptedModel` and `signal`, and the types here are the parts
 * the runners use. A script whose `open` reads the config annotates it (`(config: ChaosChildConfig)`):
 * TypeScript then infers the inbox and store types from what `open` returns.
 */
import {
  CHAOS_CREW,
  chaosCommitterEngine,
  chaosModelStep,
  chaosRecordTool,
  chaosSessionKey,
  type ChaosWrite,
} from './chaos-agents.js';
import { observeInbox, serveChaosProducer, serveChaosWorker, type ChaosChildConfig } from './chaos-child.js';

/** Anything a child closes (an inbox, a checkpoint store). */
interface Closable {
  close(): Promise<void>;
}

/** What one chaos child opens: an inbox and a checkpoint store over the test's backend. */
export interface ChaosStorage<I extends Closable, S extends Closable> {
  readonly inbox: I;
  readonly store: S;
}

/** A worker's storage and its handle on the effects tables (closed last). */
export interface ChaosWorkerStorage<I extends Closable, S extends Closable> extends ChaosStorage<I, S> {
  readonly effects: { readonly write: ChaosWrite; close(): Promise<void> | void };
}

/** A signalyard `Runner`, as a chaos child starts, drives and closes it. */
interface ChaosRunner<G> {
  start(): Promise<void>;
  accept(sessionKey: string, signal: G, opts: { id: string }): Promise<{ receiptId: string; seq: string }>;
  close(): Promise<void>;
}

/** The agents' engines of the chaos runners. */
type CommitterEngine = ReturnType<typeof chaosCommitterEngine>;

/** The signalyard functions a worker script passes to {@link serveChaosWorkerRunner}. */
export interface ChaosWorkerKit<I extends Closable, S extends Closable, M, E> {
  /** signalyard's `createRunner`. */
  createRunner(options: {
    store: S;
    inbox: I;
    worker: { id: string; leaseMs: number; pollMs: number };
    agents: [{ id: 'crew'; engine: E }, { id: 'committer'; engine: CommitterEngine }];
  }): Omit<ChaosRunner<never>, 'accept'>;
  /** signalyard's `crewEngine`. */
  crewEngine(crew: typeof CHAOS_CREW, opts: { model: M; tools: ReturnType<typeof chaosRecordTool>[] }): E;
  /** core/testing's `scriptedModel`. */
  scriptedModel(step: (request: Parameters<typeof chaosModelStep>[0]) => string): M;
}

/** The signalyard functions a producer script passes to {@link serveChaosProducerRunner}. */
export interface ChaosProducerKit<I extends Closable, S extends Closable, G> {
  /** signalyard's `createRunner`. */
  createRunner(options: {
    store: S;
    inbox: I;
    worker: false;
    agents: { id: string; engine: () => Promise<Record<string, never>> }[];
  }): ChaosRunner<G>;
  /** core's `signal`. */
  signal(kind: 'user_message', payload: string): G;
}

/** Closes `runner`, then `storage`'s inbox and store (and effects), in that order. */
async function closeAll(
  runner: { close(): Promise<void> },
  storage: ChaosStorage<Closable, Closable> & { readonly effects?: { close(): Promise<void> | void } },
): Promise<void> {
  await runner.close();
  await storage.inbox.close();
  await storage.store.close();
  await storage.effects?.close();
}

/**
 * Serves a chaos worker (see `./chaos-child.ts`'s `serveChaosWorker`): a Runner with `worker`
 * `{ id, leaseMs, pollMs }` of the parent's config over `open`'s storage, its inbox observed
 * (`observeInbox`), running the chaos agents `crew` (a scripted crew whose tool `record` writes
 * the `plain` effects) and `committer` (writes a `committed` effect after `ctx.commit`); closed
 * (runner, inbox, store, effects) when the parent says so.
 */
export function serveChaosWorkerRunner<T extends ChaosWorkerStorage<Closable, Closable>, M, E>(
  kit: ChaosWorkerKit<NoInfer<T['inbox']>, NoInfer<T['store']>, M, E>,
  open: (config: ChaosChildConfig) => T | Promise<T>,
): void {
  serveChaosWorker(async (config) => {
    const storage = await open(config);
    const { inbox, store, effects } = storage;
    const model = kit.scriptedModel((request) => chaosModelStep(request) as string);
    const runner = kit.createRunner({
      store,
      inbox: observeInbox(inbox),
      worker: { id: config.id, leaseMs: config.leaseMs, pollMs: config.pollMs },
      agents: [
        { id: 'crew', engine: kit.crewEngine(CHAOS_CREW, { model, tools: [chaosRecordTool(effects.write)] }) },
        { id: 'committer', engine: chaosCommitterEngine(effects.write) },
      ],
    });
    await runner.start();
    return { close: () => closeAll(runner, storage) };
  });
}

/**
 * Serves the chaos producer (see `./chaos-child.ts`'s `serveChaosProducer`): a Runner with
 * `worker: false` over `open`'s storage, agents `crew` and `committer` (never run here), that
 * accepts each chaos signal as a user message with the dedupe id the harness gives it; closed
 * (runner, inbox, store) when the parent says so.
 */
export function serveChaosProducerRunner<T extends ChaosStorage<Closable, Closable>, G>(
  kit: ChaosProducerKit<NoInfer<T['inbox']>, NoInfer<T['store']>, G>,
  open: (config: ChaosChildConfig) => T | Promise<T>,
): void {
  serveChaosProducer(async (config) => {
    const storage = await open(config);
    const runner = kit.createRunner({
      store: storage.store,
      inbox: storage.inbox,
      worker: false,
      agents: [{ id: 'crew' }, { id: 'committer' }].map((a) => ({ ...a, engine: () => Promise.resolve({}) })),
    });
    await runner.start();
    return {
      accept: async (sessionKey, text, id) => {
        const receipt = await runner.accept(sessionKey, kit.signal('user_message', text), { id });
        return { receiptId: receipt.receiptId, seq: receipt.seq };
      },
      close: () => closeAll(runner, storage),
    };
  }, chaosSessionKey);
}
