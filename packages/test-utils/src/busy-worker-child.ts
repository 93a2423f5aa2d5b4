/**
 * The child side of `./busy-workers.ts`: a worker process of a durable inbox's "whenBusy and
 * stops across two worker processes" tests. Its script opens an inbox and a checkpoint store and
 * calls {@link serveBusyWorker}: a worker Runner over the inbox (observed: reads, deliveries and
 * acks are reported to the parent, see `./chaos-child.ts`) with the agents `queue`, `collect`
 * and `interrupt` (whenBusy as named), whose held engines report each turn
 * `{ type: 'turn', id, agent, texts, history }` and finish it when the parent says
 * `{ type: 'finish', id, reply }`. This module imports no Signalyard code: the script passes
 * `createRunner` in, and the types here are the parts the worker uses.
 */
import { observeInbox, serveChaosWorker, type ChaosChildConfig } from './chaos-child.js';

/** Sends `message` to the parent (while the IPC channel is open). */
export function reportToParent(message: Record<string, unknown>): void {
  if (process.connected) process.send?.(message);
}

/** Anything the worker closes (an inbox, a checkpoint store). */
interface Closable {
  close(): Promise<void>;
}

/** What a held engine reads of a `TurnContext`. */
interface HeldContext {
  readonly signals: readonly { readonly payload: unknown }[];
  readonly history: readonly { readonly content: string }[];
}

/** A held engine (an `EngineFn`, structurally): its turn ends when the parent says so. */
type HeldEngine = (ctx: HeldContext) => Promise<{
  output: string | undefined;
  messages: { role: 'assistant'; content: string }[];
}>;

/** One agent of the worker runner. */
interface BusyAgent {
  id: string;
  engine: HeldEngine;
  whenBusy?: 'collect' | 'interrupt';
}

/** The signalyard function a worker script passes to {@link serveBusyWorker}. */
export interface BusyWorkerKit<I, S, A> {
  /** signalyard's `createRunner`. */
  createRunner(options: {
    store: S;
    inbox: I;
    worker: { id: string; leaseMs: number; pollMs: number };
    agents: (BusyAgent | A)[];
  }): { start(): Promise<void>; close(): Promise<void> };
}

const textOf = (payload: unknown): string => (typeof payload === 'string' ? payload : JSON.stringify(payload));

/** The agents `queue`, `collect` and `interrupt`, their turns finished by the parent's `finish` messages. */
function heldAgents(): BusyAgent[] {
  let turns = 0;
  const finishers = new Map<number, (reply: string | undefined) => void>();
  process.on('message', (raw) => {
    const m = raw as { type?: string; id?: number; reply?: string };
    if (m.type !== 'finish' || m.id === undefined) return;
    finishers.get(m.id)?.(m.reply);
    finishers.delete(m.id);
  });
  const held =
    (agent: string): HeldEngine =>
    async (ctx) => {
      const id = turns++;
      const done = new Promise<string | undefined>((resolve) => finishers.set(id, resolve));
      reportToParent({
        type: 'turn',
        id,
        agent,
        texts: ctx.signals.map((s) => textOf(s.payload)),
        history: ctx.history.map((m) => m.content),
      });
      const reply = await done;
      return { output: reply, messages: [{ role: 'assistant', content: reply ?? '' }] };
    };
  return [
    { id: 'queue', engine: held('queue') },
    { id: 'collect', engine: held('collect'), whenBusy: 'collect' },
    { id: 'interrupt', engine: held('interrupt'), whenBusy: 'interrupt' },
  ];
}

/**
 * Serves a busy worker (see the module's TSDoc): a Runner with `worker` `{ id, leaseMs, pollMs }`
 * of the parent's config over `open`'s inbox (observed) and store, the held agents and `more`
 * (agents of the script's own); closed (runner, inbox, store) when the parent says so. A script
 * whose `open` reads the config annotates it (`(config: ChaosChildConfig)`), so that TypeScript
 * infers the inbox and store types from what `open` returns.
 */
export function serveBusyWorker<T extends { readonly inbox: Closable; readonly store: Closable }, A = never>(
  kit: BusyWorkerKit<NoInfer<T['inbox']>, NoInfer<T['store']>, NoInfer<A>>,
  open: (config: ChaosChildConfig) => T,
  more: readonly A[] = [],
): void {
  serveChaosWorker(async (config) => {
    const { inbox, store } = open(config);
    const runner = kit.createRunner({
      store,
      inbox: observeInbox(inbox),
      worker: { id: config.id, leaseMs: config.leaseMs, pollMs: config.pollMs },
      agents: [...heldAgents(), ...more],
    });
    await runner.start();
    return {
      close: async () => {
        await runner.close();
        await inbox.close();
        await store.close();
      },
    };
  });
}
