// The Runner's input validation: every public method's options checked against that method's
// spec (which fields it takes, what each must be), session keys made canonical. Misuse is a
// `RunnerError` `RUNNER_INPUT_INVALID` naming the method, the bad value and what was expected.
import { describeValue } from '@signalyard/core';
import { errorText, isAbortSignal } from '@signalyard/core/internal';
import { agentIdOf, formatSessionKey, parseSessionKey, type SessionKey } from '@signalyard/sessions';
import type { RunnerError } from './errors/runner-error.js';
import { inputError } from './outcomes.js';

/** What one option must be: a test, and its description for the error (`a boolean`). @internal */
export interface OptionField {
  readonly expected: string;
  readonly test: (value: unknown) => boolean;
}

/** One method's options: its name, the shape named when they are not an object, each field's check (in checking order). @internal */
export interface OptionsSpec {
  readonly method: string;
  readonly shape: string;
  readonly fields: Readonly<Record<string, OptionField>>;
}

const ABORT_SIGNAL: OptionField = { expected: 'an AbortSignal', test: isAbortSignal };
const BOOLEAN: OptionField = { expected: 'a boolean', test: (v) => typeof v === 'boolean' };
const STRING: OptionField = { expected: 'a string', test: (v) => typeof v === 'string' };
const POSITIVE_INTEGER: OptionField = {
  expected: 'an integer >= 1',
  test: (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1,
};
const nonEmptyString = (expected: string): OptionField => ({
  expected,
  test: (v) => typeof v === 'string' && v !== '',
});

/** The options of each Runner method that takes any. @internal */
export const OPTIONS = {
  handle: { method: 'handle', shape: '{ abortSignal?: AbortSignal }', fields: { abortSignal: ABORT_SIGNAL } },
  dispatch: {
    method: 'dispatch',
    shape: '{ agentId?: string, abortSignal?: AbortSignal }',
    fields: { abortSignal: ABORT_SIGNAL, agentId: nonEmptyString('a non-empty agent id') },
  },
  approve: {
    method: 'approve',
    shape: '{ by?: string, abortSignal?: AbortSignal }',
    fields: { by: nonEmptyString('a non-empty string (who decided)'), abortSignal: ABORT_SIGNAL },
  },
  accept: {
    method: 'accept',
    shape: '{ agentId?: string, id?: string }',
    fields: { agentId: nonEmptyString('a non-empty agent id'), id: nonEmptyString('a non-empty id string') },
  },
  acceptMessage: {
    method: 'acceptMessage',
    shape: '{ id?: string }',
    fields: { id: nonEmptyString('a non-empty id string') },
  },
  outcome: {
    method: 'outcome',
    shape: '{ abortSignal?: AbortSignal, timeoutMs?: number }',
    fields: { abortSignal: ABORT_SIGNAL, timeoutMs: POSITIVE_INTEGER },
  },
  resumeStream: {
    method: 'resumeStream',
    shape: '{ from?: string, abortSignal?: AbortSignal }',
    fields: { from: nonEmptyString('a non-empty offset string'), abortSignal: ABORT_SIGNAL },
  },
  deadLetters: { method: 'deadLetters', shape: '{ limit? }', fields: { limit: POSITIVE_INTEGER } },
  fork: { method: 'fork', shape: 'an object', fields: { reissueApprovals: BOOLEAN } },
  rewind: { method: 'rewind', shape: 'an object', fields: { reissueApprovals: BOOLEAN } },
  timeline: { method: 'timeline', shape: '{ limit? }', fields: { limit: POSITIVE_INTEGER } },
  listSessions: {
    method: 'listSessions',
    shape: '{ prefix?, after?, limit? }',
    fields: { prefix: STRING, after: STRING, limit: POSITIVE_INTEGER },
  },
} as const satisfies Record<string, OptionsSpec>;

/**
 * Why `opts` do not meet `spec` (absent options are fine; an option set to `undefined` is
 * absent), as a `RUNNER_INPUT_INVALID` error; `undefined` when they do.
 * @internal
 */
export function optionsProblem(spec: OptionsSpec, opts: unknown): RunnerError | undefined {
  if (opts === undefined) return undefined;
  if (typeof opts !== 'object' || opts === null)
    return inputError(`${spec.method}() options must be ${spec.shape}, got ${describeValue(opts)}`);
  for (const [name, field] of Object.entries(spec.fields)) {
    const value = (opts as Record<string, unknown>)[name];
    if (value !== undefined && !field.test(value))
      return inputError(`${spec.method}() options.${name} must be ${field.expected}, got ${describeValue(value)}`);
  }
  return undefined;
}

/** `opts`, checked against `spec`. @throws RunnerError `RUNNER_INPUT_INVALID` (see {@link optionsProblem}). @internal */
export function checkedOptions<T extends object>(spec: OptionsSpec, opts: T | undefined): T {
  const problem = optionsProblem(spec, opts);
  if (problem !== undefined) throw problem;
  return opts ?? ({} as T);
}

/** `on()`'s options: whether the listener asks for explained decisions. @internal */
export function listenerOptions(opts: unknown): boolean {
  if (opts === undefined) return false;
  const bad = (): RunnerError =>
    inputError(`on() options must be { explainDecisions?: boolean }, got ${describeValue(opts)}`);
  if (typeof opts !== 'object' || opts === null) throw bad();
  const { explainDecisions } = opts as { explainDecisions?: unknown };
  if (explainDecisions !== undefined && typeof explainDecisions !== 'boolean') throw bad();
  return explainDecisions === true;
}

/** The canonical form of a session key and the agent it names. @throws RunnerError `RUNNER_INPUT_INVALID`. @internal */
export function canonicalKey(sessionKey: SessionKey | string): { key: string; agentId: string } {
  try {
    const parsed = typeof sessionKey === 'string' ? parseSessionKey(sessionKey) : sessionKey;
    return { key: formatSessionKey(parsed), agentId: agentIdOf(parsed) };
  } catch (error) {
    throw inputError(`Invalid session key ${describeValue(sessionKey)}: ${errorText(error)}`, error);
  }
}
