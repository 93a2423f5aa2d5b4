// Every public function of @signalyard/core that takes a string parameter, given each kind of
// non-string: a typed SignalyardError with its code (thrown, or as a rejection), never a
// TypeError. Predicates answer `false` instead. Optional parameters accept `undefined`.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  Action,
  DirectStrategy,
  InvalidArgumentError,
  MemoryCheckpointStore,
  SignalKind,
  decideApproval,
  defineTool,
  formatAction,
  isAction,
  isSignalKind,
  isSignalyardError,
  parseApprovalPolicy,
  signal,
  streamChat,
  type ChatModel,
} from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { NON_STRINGS, expectCode, failure } from '@signalyard/test-utils';

type Call = (bad: never) => unknown;

const model: ChatModel = { generate: () => Promise.resolve({ content: 'hi' }) };
const tool = (name: unknown, description?: unknown): unknown =>
  defineTool({
    name: name as string,
    ...(description === undefined ? {} : { description: description as string }),
    input: z.object({}),
    execute: () => Promise.resolve('ok'),
  });
const ctx = { toolCallId: 'c1' };

/** [function, call with the bad value, expected code, the parameter is optional (undefined is valid)]. */
const THROWING: readonly (readonly [string, Call, string, boolean?])[] = [
  ['SignalKind.custom(name)', (bad) => SignalKind.custom(bad), 'SIGNAL_KIND_INVALID'],
  ['signal(kind)', (bad) => signal(bad), 'SIGNAL_KIND_INVALID'],
  ['Action.transition(target)', (bad) => Action.transition(bad), 'ACTION_INVALID'],
  ['Action.custom(name)', (bad) => Action.custom(bad), 'ACTION_INVALID'],
  ['Action.reject(reason)', (bad) => Action.reject(bad), 'ACTION_INVALID'],
  ['DirectStrategy#execute(action)', (bad) => new DirectStrategy().execute(bad), 'ACTION_INVALID'],
  ['MemoryCheckpointStore#load(key)', (bad) => new MemoryCheckpointStore().load(bad), 'CHECKPOINT_KEY_INVALID'],
  ['MemoryCheckpointStore#save(key)', (bad) => new MemoryCheckpointStore().save(bad, {}, 0), 'CHECKPOINT_KEY_INVALID'],
  ['MemoryCheckpointStore#delete(key)', (bad) => new MemoryCheckpointStore().delete(bad), 'CHECKPOINT_KEY_INVALID'],
  ['MemoryCheckpointStore#history(key)', (bad) => new MemoryCheckpointStore().history(bad), 'CHECKPOINT_KEY_INVALID'],
  [
    'MemoryCheckpointStore#loadVersion(key)',
    (bad) => new MemoryCheckpointStore().loadVersion(bad, 1),
    'CHECKPOINT_KEY_INVALID',
  ],
  [
    'MemoryCheckpointStore#list(prefix)',
    (bad) => new MemoryCheckpointStore().list(bad),
    'CHECKPOINT_KEY_INVALID',
    true,
  ],
  ['scriptedModel([step]) (core/testing)', (bad) => scriptedModel([bad]), 'SCRIPT_INVALID'],
  // String fields of the objects public functions take.
  ['formatAction({ type })', (bad) => formatAction({ type: bad }), 'ACTION_INVALID'],
  ['formatAction({ target })', (bad) => formatAction({ type: 'transition', target: bad }), 'ACTION_INVALID'],
  ['formatAction({ name })', (bad) => formatAction({ type: 'custom', name: bad }), 'ACTION_INVALID'],
  ['formatAction({ reason })', (bad) => formatAction({ type: 'reject', reason: bad }), 'ACTION_INVALID'],
  ['defineTool({ name })', (bad) => tool(bad), 'TOOL_DEFINITION_INVALID'],
  ['defineTool({ description })', (bad) => tool('t', bad), 'TOOL_DEFINITION_INVALID', true],
  ['streamChat({ agentId })', (bad) => streamChat(model, { messages: [], agentId: bad }), 'CHAT_REQUEST_INVALID', true],
  [
    'decideApproval(call.id)',
    (bad) => decideApproval(undefined, { id: bad, name: 't', arguments: {} }, undefined, ctx),
    'APPROVAL_ARGUMENT_INVALID',
  ],
  [
    'decideApproval(call.name)',
    (bad) => decideApproval(undefined, { id: 'c1', name: bad, arguments: {} }, undefined, ctx),
    'APPROVAL_ARGUMENT_INVALID',
  ],
  [
    'decideApproval(ctx.toolCallId)',
    (bad) => decideApproval(undefined, { id: 'c1', name: 't', arguments: {} }, undefined, { toolCallId: bad }),
    'APPROVAL_ARGUMENT_INVALID',
  ],
  [
    'decideApproval(ctx.agentId)',
    (bad) => decideApproval(undefined, { id: 'c1', name: 't', arguments: {} }, undefined, { ...ctx, agentId: bad }),
    'APPROVAL_ARGUMENT_INVALID',
    true,
  ],
  [
    'parseApprovalPolicy({ rules[].tool })',
    (bad) => parseApprovalPolicy({ rules: [{ tool: bad, decision: 'ask' }] }),
    'CONFIG_INVALID',
  ],
  [
    'parseApprovalPolicy({ rules[].reason })',
    (bad) => parseApprovalPolicy({ rules: [{ tool: 't', decision: 'ask', reason: bad }] }),
    'CONFIG_INVALID',
    true,
  ],
];

/** Predicates: they answer `false` for a non-string, without throwing (an optional parameter: except `undefined`). */
const PREDICATES: readonly (readonly [string, (bad: never) => boolean, boolean?])[] = [
  ['isSignalKind(value)', (bad) => isSignalKind(bad)],
  ['isAction({ target })', (bad) => isAction({ type: 'transition', target: bad })],
  [
    'isSignalyardError(error, code)',
    (bad) => isSignalyardError(new InvalidArgumentError({ code: 'ACTION_INVALID', message: 'x' }), bad),
    true,
  ],
  ['DirectStrategy#canExecute(action)', (bad) => new DirectStrategy().canExecute(bad)],
];

describe.each(NON_STRINGS)('core, given %s where a string is expected', (_label, bad: unknown) => {
  const rows = THROWING.filter(([, , , optional]) => !(optional === true && bad === undefined)).map(
    ([name, call, code]) => ({ name, call, code }),
  );
  it.each(rows)('$name fails with a SignalyardError and its code', async ({ call, code }) => {
    const error = await failure(() => call(bad as never));
    expect(isSignalyardError(error)).toBe(true);
    expectCode(error, code);
  });

  const predicates = PREDICATES.filter(([, , optional]) => !(optional === true && bad === undefined)).map(
    ([name, call]) => ({ name, call }),
  );
  it.each(predicates)('$name answers false', ({ call }) => {
    expect(call(bad as never)).toBe(false);
  });
});
