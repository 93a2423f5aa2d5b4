/**
 * One chaos run ({@link runChaos}) of a durable inbox transport, the parent's side as every
 * transport's chaos test does it: the test file opens its inbox and checkpoint store (migrated or
 * provisioned: the children never do) and its effects, and {@link runInboxChaos} reads back
 * through them — pending entries and outcomes from the inbox, histories through a Runner over the
 * store — then closes them. The children are the test's `fixtures/chaos-worker.ts` and
 * `fixtures/chaos-producer.ts` (see `./chaos-runners.ts`). This module imports no Signalyard
 * code: the test passes `createRunner` in, and the types here are the parts the run uses.
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { runChaos, type ChaosFigures, type ChaosMessage, type ChaosSizes } from './chaos.js';

/** The parts of a durable inbox the run reads. */
export interface ChaosInbox {
  pending(opts: { limit: number }): Promise<readonly unknown[]>;
  outcome(
    receiptId: string,
    opts: { timeoutMs: number },
  ): Promise<{ readonly status: string; readonly error?: { readonly code: string } | undefined }>;
  close(): Promise<void>;
}

/** A checkpoint store, as the run closes it. */
interface ChaosStore {
  close(): Promise<void>;
}

/** A signalyard `Runner` with no inbox, as the run reads histories through it. */
interface ChaosReader {
  session(sessionKey: string): Promise<{ readonly history: readonly ChaosMessage[] } | undefined>;
  close(): Promise<void>;
}

/** What a transport's chaos test gives {@link runInboxChaos}. */
export interface InboxChaosRun<S extends ChaosStore> extends ChaosSizes {
  /** The test file's `import.meta.url`: its `fixtures/chaos-*.ts` are the children, its package their directory. */
  readonly testUrl: string;
  /** signalyard's `createRunner` (the reader: agents `crew` and `committer`, no inbox). */
  readonly createRunner: (options: {
    store: NoInfer<S>;
    agents: { id: string; engine: () => Promise<Record<string, never>> }[];
  }) => ChaosReader;
  /** The transport's inbox and the checkpoint store, both ready for the children; closed after the run. */
  readonly inbox: ChaosInbox;
  readonly store: S;
  /** The effects tables' reads; closed after the run. */
  readonly effects: {
    keys(table: 'plain' | 'committed'): Promise<readonly string[]> | readonly string[];
    close(): Promise<void> | void;
  };
  /** The children's arguments before their config. */
  readonly args: readonly string[];
  /** As {@link runChaos} takes it. */
  readonly disrupt?: () => Promise<void>;
}

/**
 * Runs the chaos harness over `run`'s transport (its checks, with vitest's `expect`, and at least
 * one signal accepted); closes the reader, the inbox, the store and the effects afterwards, in
 * that order, whatever happened. Returns the run's figures.
 */
export async function runInboxChaos<S extends ChaosStore>(run: InboxChaosRun<S>): Promise<ChaosFigures> {
  const { testUrl, createRunner, inbox, store, effects, disrupt, ...sizes } = run;
  const reader = createRunner({
    store,
    agents: [{ id: 'crew' }, { id: 'committer' }].map((a) => ({ ...a, engine: () => Promise.resolve({}) })),
  });
  try {
    const figures = await runChaos({
      ...sizes,
      workerScript: fileURLToPath(new URL('./fixtures/chaos-worker.ts', testUrl)),
      producerScript: fileURLToPath(new URL('./fixtures/chaos-producer.ts', testUrl)),
      cwd: fileURLToPath(new URL('..', testUrl)),
      pending: async () => (await inbox.pending({ limit: 1_000_000 })).length,
      history: async (key) => (await reader.session(key))?.history ?? [],
      effects: async (table) => effects.keys(table),
      outcome: async (receiptId) => {
        const outcome = await inbox.outcome(receiptId, { timeoutMs: 5000 });
        return {
          status: outcome.status,
          ...(outcome.error === undefined ? {} : { error: { code: outcome.error.code } }),
        };
      },
      ...(disrupt !== undefined && { disrupt }),
    });
    expect(figures.signals).toBeGreaterThan(0);
    return figures;
  } finally {
    await reader.close();
    await inbox.close();
    await store.close();
    await effects.close();
  }
}
