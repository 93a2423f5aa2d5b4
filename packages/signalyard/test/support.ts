// Shared helpers for the signalyard tests (not a test file: vitest only runs `*.test.ts`).
import { expect } from 'vitest';
import {
  Action,
  SignalKind,
  type ChatMessage,
  type Checkpoint,
  type CheckpointStore,
  type RunnerEvent,
  type SessionLock,
  type Signal,
} from '@signalyard/core';
import { FsmStrategy, type FsmDefinition } from '@signalyard/fsm';
import type { EngineFn, Runner, SessionCheckpointV1, TurnContext, TurnResult } from 'signalyard';
import { deferred, type Deferred } from '@signalyard/test-utils';
export { deferred, rejection as rejectionOf, thrown as thrownBy } from '@signalyard/test-utils';

/** The main session key of the agent `main`. */
export const MAIN = 'agent:main:main';

/** The text a signal carries: its payload when a string, else `payload.text` when a string. */
function textOf(s: Signal): string | undefined {
  const payload = s.payload;
  if (typeof payload === 'string') return payload;
  if (typeof payload === 'object' && payload !== null && typeof (payload as { text?: unknown }).text === 'string') {
    return (payload as { text: string }).text;
  }
  return undefined;
}

/** One engine turn the test finishes (or fails) by hand. */
interface HeldTurn {
  readonly ctx: TurnContext;
  readonly text: string | undefined;
  finish(result?: TurnResult): void;
  fail(error: unknown): void;
}

/** An engine whose every turn waits until the test finishes it. */
export interface HeldEngine {
  readonly engine: EngineFn;
  /** Every turn started so far, in start order. */
  readonly turns: readonly HeldTurn[];
  /** Resolves when the turn with this 0-based index has started. */
  turn(index: number): Promise<HeldTurn>;
  /** Turns started and not yet finished or failed. */
  readonly inFlight: number;
  readonly maxInFlight: number;
}

export function heldEngine(): HeldEngine {
  const turns: HeldTurn[] = [];
  const waiters: Deferred<HeldTurn>[] = [];
  const waiter = (index: number): Deferred<HeldTurn> => (waiters[index] ??= deferred<HeldTurn>());
  let inFlight = 0;
  let maxInFlight = 0;
  const engine: EngineFn = (ctx) => {
    const result = deferred<TurnResult>();
    let open = true;
    const close = (): boolean => {
      if (!open) return false;
      open = false;
      inFlight--;
      return true;
    };
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const turn: HeldTurn = {
      ctx,
      text: textOf(ctx.signal),
      finish: (r = {}) => {
        if (close()) result.resolve(r);
      },
      fail: (error) => {
        if (close()) result.reject(error);
      },
    };
    turns.push(turn);
    waiter(turns.length - 1).resolve(turn);
    return result.promise;
  };
  return {
    engine,
    turns,
    turn: (index) => waiter(index).promise,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
  };
}

/** An engine that answers at once with `echo: <text>` and records the contexts it saw. */
export function echoEngine(): { readonly engine: EngineFn; readonly seen: TurnContext[] } {
  const seen: TurnContext[] = [];
  return {
    seen,
    engine: async (ctx) => {
      seen.push(ctx);
      return {
        output: `echo: ${textOf(ctx.signal) ?? ''}`,
        messages: [{ role: 'assistant', content: `echo: ${textOf(ctx.signal) ?? ''}` }],
      };
    },
  };
}

/** Whether (and how) a promise has settled, readable synchronously. */
export interface Tracked<T> {
  readonly promise: Promise<T>;
  readonly settled: boolean;
  readonly value: T | undefined;
}

export function track<T>(promise: Promise<T>): Tracked<T> {
  const state: { settled: boolean; value: T | undefined } = { settled: false, value: undefined };
  promise.then(
    (value) => {
      state.settled = true;
      state.value = value;
    },
    () => {
      state.settled = true;
    },
  );
  return {
    promise,
    get settled() {
      return state.settled;
    },
    get value() {
      return state.value;
    },
  };
}

/** Every event the runner emits from now on. */
export function recordEvents(runner: Runner): RunnerEvent[] {
  const events: RunnerEvent[] = [];
  runner.on((event) => {
    events.push(event);
  });
  return events;
}

/** The checkpoint stored under `key`, with its data typed as the runner's format. */
export async function stored(
  store: CheckpointStore,
  key: string,
): Promise<{ version: number; data: SessionCheckpointV1 }> {
  const checkpoint = await store.load(key);
  if (checkpoint === undefined) return expect.unreachable(`expected a checkpoint under ${key}`);
  return { version: checkpoint.version, data: checkpoint.data as SessionCheckpointV1 };
}

export const user = (content: string): ChatMessage => ({ role: 'user', content });
export const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

/** The contents of the user messages of a history. */
export function userTexts(history: readonly ChatMessage[]): string[] {
  return history.filter((m) => m.role === 'user').map((m) => m.content);
}

/** A user_message signal routed to a transition, for FSM agents. */
export const START = SignalKind.custom('start');
export const FINISH = SignalKind.custom('finish');

/**
 * idle --start--> busy --finish--> idle. While `busy`, the strategy tier rejects user messages
 * (`reject('busy')`, route `busy-gate`).
 */
export function phaseFsm(): FsmDefinition {
  return FsmStrategy.builder()
    .initial('idle')
    .transition('idle', 'start', 'busy')
    .transition('busy', 'finish', 'idle')
    .route({ kind: SignalKind.UserMessage, action: Action.reject('busy'), name: 'busy-gate' }, { inStates: ['busy'] })
    .define();
}

/** Agent routes that move a {@link phaseFsm}: `custom:start` → transition(start), `custom:finish` → transition(finish). */
export const phaseRoutes = [
  { kind: START, action: Action.transition('start'), name: 'start' },
  { kind: FINISH, action: Action.transition('finish'), name: 'finish' },
] as const;

/** A SessionLock that records each call and which key it holds while `fn` runs. */
export interface RecordingLock {
  readonly lock: SessionLock;
  readonly calls: { key: string; abortSignal: AbortSignal | undefined }[];
  readonly holding: string | undefined;
}

export function recordingLock(): RecordingLock {
  const calls: { key: string; abortSignal: AbortSignal | undefined }[] = [];
  let holding: string | undefined;
  const lock: SessionLock = {
    async withLock<T>(key: string, fn: () => Promise<T>, opts?: { abortSignal?: AbortSignal }): Promise<T> {
      calls.push({ key, abortSignal: opts?.abortSignal });
      if (holding !== undefined) throw new Error(`lock re-entered for ${key} while holding ${holding}`);
      holding = key;
      try {
        return await fn();
      } finally {
        holding = undefined;
      }
    },
  };
  return {
    lock,
    calls,
    get holding() {
      return holding;
    },
  };
}

/** A CheckpointStore that delegates to `inner`, with hooks to intercept load and save. */
export function wrapStore(
  inner: CheckpointStore,
  hooks: {
    load?: (key: string, next: () => Promise<Checkpoint | undefined>) => Promise<Checkpoint | undefined>;
    save?: (key: string, data: unknown, expectedVersion: number, next: () => Promise<number>) => Promise<number>;
  },
): CheckpointStore {
  return {
    load: (key) => (hooks.load === undefined ? inner.load(key) : hooks.load(key, () => inner.load(key))),
    save: (key, data, expectedVersion) =>
      hooks.save === undefined
        ? inner.save(key, data, expectedVersion)
        : hooks.save(key, data, expectedVersion, () => inner.save(key, data, expectedVersion)),
    delete: (key) => inner.delete(key),
    list: (prefix) => inner.list(prefix),
  };
}
