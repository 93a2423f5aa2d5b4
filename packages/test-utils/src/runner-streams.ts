/**
 * The Runner's "streams from any worker, resumable" tests (inbox.md), for every durable inbox
 * transport: a producer runner (`worker: false`, handles of its own) streams a scripted model's
 * reply token by token as a worker runner applies it; a reader that drops resumes from an offset;
 * a worker that stops renewing and acquiring (as if its process were killed) is replaced once its
 * lease expires, and the reader sees `restarted`, then one complete reply.
 *
 * A transport supplies its storage (fresh inbox and store handles on one backend, per test), its
 * pace, and its `describe`; {@link runnerStreamsSuite} registers the tests. This module imports no
 * Signalyard code (this package depends on nothing but vitest): the test file passes
 * `createRunner` and `scriptedModel` in, and the types here are the parts the suite uses.
 */
import { afterAll, afterEach, beforeAll, describe as vitestDescribe, expect, it } from 'vitest';
import { collect, deferred } from './index.js';

/** A turn event (a core `TurnEvent`), as the suite reads it. */
interface StreamsEvent {
  readonly type: string;
  readonly delta?: unknown;
}

/** A streamed turn (a signalyard `TurnStream`), as the suite reads it. */
interface StreamsTurn extends AsyncIterable<StreamsEvent> {
  readonly outcome: Promise<unknown>;
  readonly receiptId: Promise<string | undefined>;
  offsetOf(event: StreamsEvent): string | undefined;
}

/** The parts of a signalyard `Runner` the suite drives. */
export interface StreamsRunner {
  stream(message: { channel: string; text: string; peer: { kind: 'dm'; id: string } }): StreamsTurn;
  resumeStream(target: { receiptId: string }, opts: { from: string }): AsyncIterable<StreamsEvent>;
  close(): Promise<void>;
}

/** The parts of an inbox the suite touches: a dead worker's inbox has its `renew` and `acquire` replaced. */
export interface StreamsInbox {
  renew(...args: never[]): Promise<boolean>;
  acquire(...args: never[]): Promise<readonly unknown[]>;
  close(): Promise<void>;
}

/** A checkpoint store, as the suite closes it. */
export interface StreamsStore {
  close(): Promise<void>;
}

/** What the suite's engines read of a `TurnContext`. */
interface StreamsContext {
  readonly history: readonly unknown[];
  emitText(delta: string): void;
}

/** An engine of the suite (an `EngineFn`, structurally). */
type StreamsEngine = (
  ctx: StreamsContext,
) => Promise<{ messages: { role: 'assistant'; content: string }[]; output?: string }>;

/** The `RunnerOptions` the suite passes to `createRunner`. */
export interface StreamsRunnerOptions<I extends StreamsInbox, S extends StreamsStore> {
  agents: { id: string; engine: StreamsEngine }[];
  inbox: I;
  store: S;
  worker: false | { pollMs: number; leaseMs?: number };
  closeTimeoutMs?: number;
}

/** A scripted model (core/testing's `ScriptedModel`), as the suite streams it. */
export interface StreamsModel {
  stream(request: { messages: readonly unknown[] }): AsyncIterable<{ readonly type: string; readonly delta?: unknown }>;
}

/** One test's storage: each call opens fresh handles on the same backend (as another process would). */
export interface StreamsStorage<I extends StreamsInbox, S extends StreamsStore> {
  inbox(): I;
  store(): S;
}

/** What a transport gives {@link runnerStreamsSuite}. */
export interface RunnerStreamsTarget<I extends StreamsInbox, S extends StreamsStore> {
  /** The inbox's name, first in the suite's title (`SqliteInbox`). */
  readonly name: string;
  /** signalyard's `createRunner` (the inbox and store types are inferred from {@link RunnerStreamsTarget.storage}). */
  createRunner(options: StreamsRunnerOptions<NoInfer<I>, NoInfer<S>>): StreamsRunner;
  /** core/testing's `scriptedModel`. */
  scriptedModel(script: string[], options?: { streamChunkChars: number }): StreamsModel;
  /** Fresh storage for one test (a file, migrated tables, a provisioned stream). */
  storage(): Promise<StreamsStorage<I, S>>;
  /** The workers' `pollMs` (the storage's inboxes poll at the same pace). */
  readonly pollMs: number;
  /** The workers' `leaseMs` in the dead-worker test: the next worker takes over once it expires. */
  readonly leaseMs: number;
  /** vitest's `describe` (the default), or one that skips without the backend (`describePostgres`). */
  readonly describe?: (name: string, fn: () => void) => void;
  /** Runs before the suite's tests (starts a server). */
  readonly beforeAll?: () => Promise<void> | void;
  /** Runs after them (drops tables, stops a server, removes a directory). */
  readonly afterAll?: () => Promise<void> | void;
}

const REPLY = 'Streams cross processes, token by token.';
const MESSAGE = { channel: 'web', text: 'hi', peer: { kind: 'dm' as const, id: 'ann' } };
/** A hang guard, never a speed check (a server round trip per event, on a busy 2-core machine). */
const TIMEOUT = { timeout: 60_000 };

/** An engine that streams the model's reply as text deltas and keeps it. */
function tokenEngine(model: StreamsModel): StreamsEngine {
  return async (ctx) => {
    let text = '';
    for await (const part of model.stream({ messages: [...ctx.history] })) {
      if (part.type !== 'text-delta' || typeof part.delta !== 'string') continue;
      text += part.delta;
      ctx.emitText(part.delta);
    }
    return { messages: [{ role: 'assistant', content: text }], output: text };
  };
}

const deltas = (events: readonly StreamsEvent[]): unknown[] =>
  events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : []));

/** A runner over handles of its own on `storage` (its inbox `inbox` when given). */
type RunnerOn<I extends StreamsInbox, S extends StreamsStore> = (
  storage: StreamsStorage<I, S>,
  engine: StreamsEngine,
  options: Pick<StreamsRunnerOptions<I, S>, 'worker' | 'closeTimeoutMs'>,
  inbox?: I,
) => StreamsRunner;

/**
 * Registers the Runner's streaming tests over one durable inbox transport (see the module's
 * TSDoc): `token by token, as an in-process stream; a reader that drops resumes from its offset`
 * and `a worker that dies mid-turn: the reader sees restarted, then one complete reply from the
 * next worker`. Every runner, inbox and store a test opens is closed after it (runner first); the
 * suite keeps no state outside this call, so several files may call it in one vitest worker.
 *
 * @example
 * ```ts
 * runnerStreamsSuite({
 *   name: 'SqliteInbox', createRunner, scriptedModel, pollMs: 20, leaseMs: 300,
 *   storage: async () => {
 *     const path = freshPath();
 *     return { inbox: () => new SqliteInbox({ path, pollMs: 20 }), store: () => new SqliteCheckpointStore({ path }) };
 *   },
 * });
 * ```
 */
export function runnerStreamsSuite<I extends StreamsInbox, S extends StreamsStore>(
  target: RunnerStreamsTarget<I, S>,
): void {
  const describe = target.describe ?? vitestDescribe;
  describe(`${target.name}: a producer streams what a worker applies`, () => {
    const closers: (() => Promise<unknown>)[] = [];
    const { beforeAll: setUp, afterAll: tearDown } = target;
    if (setUp !== undefined) beforeAll(setUp);
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    });
    if (tearDown !== undefined) afterAll(tearDown);

    const runnerOn: RunnerOn<I, S> = (storage, engine, options, inbox = storage.inbox()) => {
      const store = storage.store();
      const runner = target.createRunner({ agents: [{ id: 'main', engine }], inbox, store, ...options });
      closers.push(
        () => store.close(),
        () => inbox.close(),
        () => runner.close(),
      );
      return runner;
    };

    it('token by token, as an in-process stream; a reader that drops resumes from its offset', TIMEOUT, () =>
      streamsAndResumes(target, runnerOn),
    );
    it(
      'a worker that dies mid-turn: the reader sees restarted, then one complete reply from the next worker',
      TIMEOUT,
      () => restartsAfterDeath(target, runnerOn),
    );
  });
}

async function streamsAndResumes<I extends StreamsInbox, S extends StreamsStore>(
  target: RunnerStreamsTarget<I, S>,
  runnerOn: RunnerOn<I, S>,
): Promise<void> {
  const storage = await target.storage();
  const { pollMs } = target;
  runnerOn(storage, tokenEngine(target.scriptedModel([REPLY], { streamChunkChars: 4 })), { worker: { pollMs } });
  const producer = runnerOn(storage, tokenEngine(target.scriptedModel([])), {
    worker: false,
  });
  const turn = producer.stream(MESSAGE);
  const first: StreamsEvent[] = [];
  for await (const event of turn) {
    first.push(event);
    if (first.length === 4) break; // the connection drops after routed + 3 deltas
  }
  const receiptId = (await turn.receiptId) as string;
  const from = turn.offsetOf(first[3] as StreamsEvent) as string;
  const rest = await collect(producer.resumeStream({ receiptId }, { from }));
  const all = [...first, ...rest];
  expect(all[0]?.type).toBe('routed');
  expect(deltas(all).join('')).toBe(REPLY);
  expect(deltas(all).length).toBe(Math.ceil(REPLY.length / 4));
  expect(all.at(-1)).toMatchObject({ type: 'outcome', outcome: { status: 'completed', output: REPLY } });
  expect(all.filter((e) => e.type === 'outcome')).toHaveLength(1);
  expect(await turn.outcome).toMatchObject({ status: 'completed', output: REPLY });
}

async function restartsAfterDeath<I extends StreamsInbox, S extends StreamsStore>(
  target: RunnerStreamsTarget<I, S>,
  runnerOn: RunnerOn<I, S>,
): Promise<void> {
  const storage = await target.storage();
  const { pollMs, leaseMs } = target;
  const stuck = deferred();
  const dying = deferred();
  const deadInbox = storage.inbox();
  runnerOn(
    storage,
    async (ctx) => {
      ctx.emitText('Half a ');
      ctx.emitText('repl');
      dying.resolve();
      await stuck.promise; // hangs: its process is gone
      return { messages: [] };
    },
    { worker: { pollMs, leaseMs }, closeTimeoutMs: 50 },
    deadInbox,
  );
  const producer = runnerOn(storage, tokenEngine(target.scriptedModel([])), {
    worker: false,
  });
  const turn = producer.stream(MESSAGE);
  const events: StreamsEvent[] = [];
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
  const dead: StreamsInbox = deadInbox;
  dead.renew = () => new Promise<boolean>(() => undefined);
  dead.acquire = () => Promise.resolve([]);
  runnerOn(storage, tokenEngine(target.scriptedModel([REPLY], { streamChunkChars: 5 })), {
    worker: { pollMs, leaseMs },
  });
  await reading;
  stuck.resolve();
  const restart = events.findIndex((e) => e.type === 'restarted');
  expect(deltas(events.slice(0, restart))).toEqual(['Half a ', 'repl']);
  expect(events[restart]).toEqual({ type: 'restarted', attempt: 2 });
  const after = events.slice(restart + 1);
  expect(after.map((e) => e.type).filter((type) => type !== 'text_delta')).toEqual(['routed', 'outcome']);
  expect(deltas(after).join('')).toBe(REPLY);
  expect(await turn.outcome).toMatchObject({ status: 'completed', output: REPLY });
}
