/**
 * Helpers the Signalyard packages' own tests share: deferred promises, the error a call throws
 * or a promise rejects with, typed error-code assertions, draining async iterables, garbage-collection checks. Private to
 * the repository (never published); depends on nothing but vitest (the `./postgres` subpath adds `pg`). Also a scripted engine that
 * asks for tool approval (`approvalEngine`), for the Runner's approval tests.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { expect } from 'vitest';

/** A promise with its resolve/reject exposed (Node 20 has no `Promise.withResolvers`). */
export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

/** A {@link Deferred}: tests hold an engine, a stage or a model open and release it explicitly (no sleeps). */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Calls `fn` and returns what it threw; fails the test when it returns normally. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return expect.unreachable('expected the call to throw, but it returned');
}

/** Awaits `promise` and returns its rejection reason; fails the test when it resolves. */
export async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return expect.unreachable('expected a rejection, but the promise resolved');
}

/** What `expectCode` returns: a Signalyard error, structurally (this package imports no Signalyard code). */
export interface CodedError extends Error {
  readonly code: string;
}

const SIGNALYARD_ERROR = Symbol.for('signalyard.error.SignalyardError');

/** Asserts that `error` is a SignalyardError (by its `Symbol.for` marker, not `instanceof`) with `code`; returns it. */
export function expectCode(error: unknown, code: string): CodedError {
  const marked =
    typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[SIGNALYARD_ERROR] === true;
  if (!marked) return expect.unreachable(`expected a SignalyardError with code ${code}, got ${String(error)}`);
  expect((error as CodedError).code).toBe(code);
  return error as CodedError;
}

/** `fn` throws a SignalyardError with `code`; returns it. */
export function throwsCode(fn: () => unknown, code: string): CodedError {
  return expectCode(thrown(fn), code);
}

/** `promise` rejects with a SignalyardError with `code`; returns it. */
export async function rejectsCode(promise: PromiseLike<unknown>, code: string): Promise<CodedError> {
  return expectCode(await rejection(promise), code);
}

/**
 * One value of each kind that is not a string, labelled, for tables of bad string arguments:
 * `undefined`, `null`, a number, an object and a Symbol (which a template literal cannot print).
 */
export const NON_STRINGS: readonly (readonly [label: string, value: unknown])[] = Object.freeze([
  ['undefined', undefined],
  ['null', null],
  ['a number', 42],
  ['an object', { id: 'x' }],
  ['a Symbol', Symbol('x')],
] as const);

/**
 * What `fn` fails with: the error it throws, or — when it returns a promise or an async
 * iterable — the rejection (of the iterable's first step). Fails the test when `fn` succeeds.
 */
export async function failure(fn: () => unknown): Promise<unknown> {
  let result: unknown;
  try {
    result = fn();
    if (typeof result === 'object' && result !== null && Symbol.asyncIterator in result) {
      await (result as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
    } else {
      await result;
    }
  } catch (error) {
    return error;
  }
  return expect.unreachable(`expected the call to fail, but it succeeded (${typeof result})`);
}

/** Drains an async iterable into an array. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

let gcFunction: (() => void) | undefined;

/** Runs a full garbage collection (V8's `gc`, enabled on first use without a command-line flag). */
export function collectGarbage(): void {
  if (gcFunction === undefined) {
    v8.setFlagsFromString('--expose-gc');
    gcFunction = vm.runInNewContext('gc') as () => void;
  }
  gcFunction();
}

/**
 * Counts how many of the objects registered with `track` have been garbage-collected, after
 * collecting (a few rounds: finalizers run asynchronously). Use it to show that something is no
 * longer reachable — never to measure time.
 */
export function collectionCounter(): { track(value: object): void; collected(): Promise<number> } {
  let collected = 0;
  const registry = new FinalizationRegistry<undefined>(() => {
    collected++;
  });
  return {
    track(value) {
      registry.register(value, undefined);
    },
    async collected() {
      for (let round = 0; round < 10; round++) {
        collectGarbage();
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      return collected;
    },
  };
}

/** `process.memoryUsage().heapUsed` after a full garbage collection, in bytes. */
export function heapAfterGc(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

export { approvalEngine } from './approval-engine.js';
export type {
  ApprovalEngineOptions,
  ApprovalEngineState,
  ApprovalTurnContext,
  ApprovalTurnResult,
  TestPendingApproval,
} from './approval-engine.js';
