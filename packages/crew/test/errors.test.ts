import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import * as z from 'zod';
import {
  AbortedError,
  ConfigError,
  SignalyardError,
  defineTool,
  type ChatModel,
  type ChatResponse,
} from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import {
  CrewAgentError,
  CrewArgumentError,
  CrewExecutor,
  CrewRunError,
  CrewToolError,
  SignalMatcher,
  matchLevel,
  type CrewAgentErrorCode,
  type CrewArgumentErrorCode,
  type CrewConfigInput,
  type CrewEvent,
  type CrewRunErrorCode,
  type CrewToolErrorCode,
} from '@signalyard/crew';
import { thrown } from '@signalyard/test-utils';
import { collect, endOf, hangingModel, runError } from './crew-support.js';

afterEach(() => {
  vi.useRealTimers();
});

/** lead → group "g" (members a, b) → lead; lead ends on [END]. */
const groupCrew = (settings: CrewConfigInput['settings'] = {}): CrewConfigInput => ({
  entryPoint: 'lead',
  agents: [{ id: 'lead' }, { id: 'a', tools: ['t'] }, { id: 'b' }],
  settings: { parallelTimeoutSeconds: 30, ...settings },
  routing: {
    signals: {
      lead: [
        { signal: '[ASK]', target: 'g' },
        { signal: '[END]', target: '' },
      ],
    },
    parallelGroups: { g: { agents: ['a', 'b'], nextAgent: 'lead' } },
  },
});

const t = defineTool({ name: 't', input: z.object({}), execute: async () => 'ok' });

const throwingModel = (error: unknown): ChatModel => ({
  generate: () => Promise.reject(error instanceof Error ? error : new Error(String(error))),
});

const memberErrors = (events: readonly CrewEvent[]): unknown[] =>
  events.flatMap((e) => (e.type === 'parallel_member_end' && e.error !== undefined ? [e.error] : []));

describe('CrewAgentError: one agent turn failed', () => {
  it('a parallel member whose model throws reports CREW_MEMBER_FAILED with its agent, group and the model error as cause', async () => {
    const boom = new Error('provider down');
    const model = { lead: scriptedModel(['[ASK]', '[END]']), a: throwingModel(boom), b: scriptedModel(['fine']) };
    const events = await collect(new CrewExecutor({ crew: groupCrew(), model, tools: [t] }), 'go');

    const [error] = memberErrors(events);
    expect(CrewAgentError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(CrewAgentError);
    expect(error).toMatchObject({ name: 'CrewAgentError', code: 'CREW_MEMBER_FAILED', agentId: 'a', group: 'g' });
    expect((error as CrewAgentError).cause).toBe(boom);
    expect(CrewRunError.isInstance(error)).toBe(false);
    expect(endOf(events).reason).toBe('terminated_by_signal');
  });

  it('a parallel member looping on tools reports CREW_MEMBER_TOOL_LOOP; the group goes on with the other member', async () => {
    const call: ChatResponse = { content: '', toolCalls: [{ id: '1', name: 't', arguments: {} }] };
    const model = {
      lead: scriptedModel(['[ASK]', '[END]']),
      a: scriptedModel([call, call]),
      b: scriptedModel(['fine']),
    };
    const crew = groupCrew({ maxToolRounds: 1 });
    const events = await collect(new CrewExecutor({ crew, model, tools: [t] }), 'go');

    const [error] = memberErrors(events);
    expect(CrewAgentError.isInstance(error)).toBe(true);
    expect(CrewRunError.isInstance(error)).toBe(false);
    expect(error).toMatchObject({ code: 'CREW_MEMBER_TOOL_LOOP', agentId: 'a', group: 'g' });
    expect((error as CrewAgentError).message).toBe('Agent "a" asked for tool round 2, but max_tool_rounds is 1');
    expect(events.find((e) => e.type === 'parallel_end')).toMatchObject({ succeeded: ['b'] });
    expect(endOf(events).reason).toBe('terminated_by_signal');
  });

  it('a member out of max_rounds reports CREW_MAX_ROUNDS', async () => {
    const call: ChatResponse = { content: '', toolCalls: [{ id: '1', name: 't', arguments: {} }] };
    const model = { lead: scriptedModel(['[ASK]']), a: scriptedModel([call]), b: scriptedModel([call]) };
    const events = await collect(new CrewExecutor({ crew: groupCrew({ maxRounds: 3 }), model, tools: [t] }), 'go');

    const errors = memberErrors(events);
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(CrewAgentError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'CREW_MAX_ROUNDS', group: 'g' });
    }
  });

  it('a member past the deadline reports CREW_PARALLEL_TIMEOUT; the abort reason its model sees is one too, naming only the group', async () => {
    vi.useFakeTimers();
    const slow = hangingModel();
    const model = { lead: scriptedModel(['[ASK]', '[END]']), a: scriptedModel(['quick']), b: slow };
    const events = collect(new CrewExecutor({ crew: groupCrew(), model, tools: [t] }), 'go');
    await vi.advanceTimersByTimeAsync(30_000);

    const [error] = memberErrors(await events);
    expect(CrewAgentError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CREW_PARALLEL_TIMEOUT', agentId: 'b', group: 'g' });
    const reason: unknown = slow.requests[0]?.abortSignal?.reason;
    expect(CrewAgentError.isInstance(reason)).toBe(true);
    expect(reason).toMatchObject({ code: 'CREW_PARALLEL_TIMEOUT', group: 'g' });
    expect((reason as CrewAgentError).agentId).toBeUndefined();
  });

  it('outside a group the run fails with a CrewRunError CREW_AGENT_FAILED, the model error as cause, carrying the state', async () => {
    const boom = new Error('provider down');
    const crew: CrewConfigInput = { entryPoint: 'solo', agents: [{ id: 'solo' }] };
    const error = await runError(new CrewExecutor({ crew, model: throwingModel(boom) }).execute('hi'));

    expect(error.code).toBe('CREW_AGENT_FAILED');
    expect(error.cause).toBe(boom);
    expect(error.agentId).toBe('solo');
    expect(error.state.history).toEqual([{ role: 'user', content: 'hi' }]);
    expect(CrewAgentError.isInstance(error)).toBe(false);
  });
});

describe('CrewToolError: a call to a tool the agent does not have', () => {
  it('is the result of the tool_result event (isError), naming the agent and the tool', async () => {
    const model = scriptedModel({
      solo: [{ content: '', toolCalls: [{ id: 'x', name: 'launch', arguments: {} }] }, 'done'],
    });
    const crew: CrewConfigInput = { entryPoint: 'solo', agents: [{ id: 'solo' }] };
    const events = await collect(new CrewExecutor({ crew, model }), 'go');

    const result = events.find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ type: 'tool_result', isError: true });
    const error = result?.type === 'tool_result' ? result.result : undefined;
    expect(CrewToolError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      name: 'CrewToolError',
      code: 'CREW_UNKNOWN_TOOL',
      agentId: 'solo',
      toolName: 'launch',
    });
    expect(endOf(events).content).toBe('done'); // not a run error: the run went on
  });
});

describe('CrewArgumentError: a matching function given the wrong type', () => {
  it.each([
    ['matchLevel(signal: 42)', () => matchLevel(42 as unknown as string, 'x'), 'CREW_SIGNAL_INVALID', 42],
    [
      'SignalMatcher(signals: "[A]")',
      () => new SignalMatcher('[A]' as unknown as string[]),
      'CREW_SIGNAL_INVALID',
      '[A]',
    ],
    ['SignalMatcher([..., 7])', () => new SignalMatcher(['[A]', 7 as unknown as string]), 'CREW_SIGNAL_INVALID', 7],
    ['matchLevel(content: null)', () => matchLevel('[A]', null as unknown as string), 'CREW_CONTENT_INVALID', null],
    ['first(content: 1)', () => new SignalMatcher(['[A]']).first(1 as unknown as string), 'CREW_CONTENT_INVALID', 1],
  ])('%s throws %s with the value', (_label, fn, code, value) => {
    const error = thrown(fn);

    expect(CrewArgumentError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ name: 'CrewArgumentError', code });
    expect((error as CrewArgumentError).value).toBe(value);
  });
});

describe('isInstance', () => {
  const agentError = new CrewAgentError({ code: 'CREW_MEMBER_TOOL_LOOP', message: 'm', agentId: 'a' });
  const toolError = new CrewToolError({ code: 'CREW_UNKNOWN_TOOL', message: 'm', agentId: 'a', toolName: 't' });
  const argumentError = new CrewArgumentError({ code: 'CREW_SIGNAL_INVALID', message: 'm', value: 1 });
  const runFailure = new CrewRunError({ code: 'CREW_TOOL_LOOP', message: 'm', state: { history: [] } });
  const classes = [
    ['CrewAgentError', CrewAgentError, agentError],
    ['CrewToolError', CrewToolError, toolError],
    ['CrewArgumentError', CrewArgumentError, argumentError],
    ['CrewRunError', CrewRunError, runFailure],
  ] as const;
  const others: unknown[] = [
    new SignalyardError({ code: 'CREW_TOOL_LOOP', message: 'same code, base class' }),
    new ConfigError({ problems: [{ path: 'x', message: 'y' }] }),
    new AbortedError(),
    new Error('x'),
    { code: 'CREW_UNKNOWN_TOOL', name: 'CrewToolError' },
    null,
    undefined,
  ];

  it.each(classes)('%s.isInstance matches its own errors and no other class’s', (_name, type, own) => {
    expect(type.isInstance(own)).toBe(true);
    expect(SignalyardError.isInstance(own)).toBe(true);
    for (const [, , other] of classes) if (other !== own) expect(type.isInstance(other)).toBe(false);
    for (const other of others) expect(type.isInstance(other)).toBe(false);
  });

  it.each(classes)(
    '%s.isInstance recognises an error from another installed copy by its Symbol.for marker',
    (name, type) => {
      const foreign = Object.assign(new Error('x'), { [Symbol.for(`signalyard.error.${name}`)]: true });
      expect(type.isInstance(foreign)).toBe(true);
      for (const [otherName, other] of classes) if (otherName !== name) expect(other.isInstance(foreign)).toBe(false);
    },
  );

  it('each class owns a typed union of its codes', () => {
    expectTypeOf<CrewAgentError['code']>().toEqualTypeOf<CrewAgentErrorCode>();
    expectTypeOf<CrewAgentErrorCode>().toEqualTypeOf<
      'CREW_MEMBER_FAILED' | 'CREW_MEMBER_TOOL_LOOP' | 'CREW_MAX_ROUNDS' | 'CREW_PARALLEL_TIMEOUT'
    >();
    expectTypeOf<CrewToolError['code']>().toEqualTypeOf<CrewToolErrorCode>();
    expectTypeOf<CrewToolErrorCode>().toEqualTypeOf<'CREW_UNKNOWN_TOOL' | 'CREW_TOOL_RESULT_INVALID'>();
    expectTypeOf<CrewArgumentError['code']>().toEqualTypeOf<CrewArgumentErrorCode>();
    expectTypeOf<CrewArgumentErrorCode>().toEqualTypeOf<
      'CREW_SIGNAL_INVALID' | 'CREW_CONTENT_INVALID' | 'CREW_HISTORY_INVALID'
    >();
    expectTypeOf<CrewRunError['code']>().toEqualTypeOf<CrewRunErrorCode>();
  });

  it('no code has two owner classes: a run error and a member error never share one', () => {
    expectTypeOf<Extract<CrewRunErrorCode, CrewAgentErrorCode>>().toEqualTypeOf<never>();
    expectTypeOf<Extract<CrewRunErrorCode, CrewToolErrorCode | CrewArgumentErrorCode>>().toEqualTypeOf<never>();
    expectTypeOf<Extract<CrewAgentErrorCode, CrewToolErrorCode | CrewArgumentErrorCode>>().toEqualTypeOf<never>();
  });
});
