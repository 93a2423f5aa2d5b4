import { expect } from 'vitest';
import { isSignalyardError } from '@signalyard/core';
import type { SignalyardError } from '@signalyard/core';

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

/** Asserts that `error` is a SignalyardError (by its marker, not `instanceof`) with `code`, and returns it typed. */
export function expectCode(error: unknown, code: string): SignalyardError {
  if (!isSignalyardError(error)) {
    return expect.unreachable(`expected a SignalyardError with code ${code}, got ${String(error)}`);
  }
  expect(error.code).toBe(code);
  return error;
}

/** `fn` throws a SignalyardError with `code`; returns it. */
export function throwsCode(fn: () => unknown, code: string): SignalyardError {
  return expectCode(thrown(fn), code);
}

/** `promise` rejects with a SignalyardError with `code`; returns it. */
export async function rejectsCode(promise: PromiseLike<unknown>, code: string): Promise<SignalyardError> {
  return expectCode(await rejection(promise), code);
}

/** Drains an async iterable into an array. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
