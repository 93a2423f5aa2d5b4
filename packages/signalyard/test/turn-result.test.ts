import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Action, MemoryCheckpointStore } from '@signalyard/core';
import { RunnerError, createRunner, type EngineFn } from 'signalyard';
import { isWellFormedTurnResult, turnResultProblem, turnResultSchema } from '../src/turn-result.js';

describe('turnResultProblem', () => {
  it.each([
    { what: 'undefined', result: undefined },
    { what: 'an empty object', result: {} },
    { what: 'every field', result: { messages: [{ role: 'tool', content: '' }], status: 'paused', actions: [] } },
    { what: 'a message with extra fields', result: { messages: [{ role: 'assistant', content: 'x', name: 'bot' }] } },
    { what: 'any output and state', result: { output: [1], state: null } },
    {
      what: 'an object without a prototype',
      result: Object.assign(Object.create(null) as object, { status: 'completed' }),
    },
    {
      what: 'the actions a turn can take',
      result: { actions: [Action.transition('go'), Action.custom('x'), Action.reject('no')] },
    },
  ])('accepts $what', ({ result }) => {
    expect(turnResultProblem(result)).toBeUndefined();
  });

  it.each([
    {
      result: 42,
      message:
        '42, expected a TurnResult object { messages?, state?, output?, status?, actions?, pendingApprovals?, reply? }',
    },
    { result: null, message: 'null, expected a TurnResult object' },
    { result: [], message: '[], expected a TurnResult object' },
    { result: { messages: 'hi' }, message: 'a TurnResult whose messages is "hi", expected a list of chat messages' },
    {
      result: { messages: [{ content: 'hi' }] },
      message: 'a TurnResult whose messages[0].role is undefined, expected "system", "user", "assistant" or "tool"',
    },
    {
      result: {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'robot', content: 'hi' },
        ],
      },
      message: 'messages[1].role is "robot", expected "system", "user", "assistant" or "tool"',
    },
    {
      result: { messages: [{ role: 'assistant', content: 1 }] },
      message: 'messages[0].content is 1, expected a string',
    },
    { result: { messages: ['hi'] }, message: 'messages[0] is "hi", expected a chat message { role, content }' },
    { result: { status: 'done' }, message: 'a TurnResult whose status is "done", expected "completed" or "paused"' },
    { result: { actions: Action.Continue }, message: 'actions is {"type":"continue"}, expected a list of actions' },
    {
      result: { actions: [{ type: 'teleport' }] },
      message: 'actions[0] is not an Action: unknown action type "teleport": expected one of',
    },
    {
      result: { actions: [Action.GracefulStop, { type: 'transition', target: '' }] },
      message: 'actions[1] is not an Action: a transition action needs a non-empty string "target", got ""',
    },
  ])('names the path, the bad value and what was expected: $message', ({ result, message }) => {
    expect(turnResultProblem(result)).toContain(message);
  });

  it('lists every problem, up to five, then counts the rest', () => {
    const problem = turnResultProblem({ status: 1, messages: [{ role: 'user', content: 'ok' }, 2], actions: 'x' });
    expect(problem).toBe(
      'a TurnResult whose messages[1] is 2, expected a chat message { role, content }; ' +
        'whose status is 1, expected "completed" or "paused"; whose actions is "x", expected a list of actions',
    );
    const many = turnResultProblem({ messages: Array.from({ length: 8 }, (_, i) => i) });
    expect(many).toContain('messages[4] is 4');
    expect(many).not.toContain('messages[5]');
    expect(many).toMatch(/; and 3 more problems$/);
  });

  it('throws what a getter of the result throws (the turn reports it)', () => {
    const hostile = {
      get status(): never {
        throw new Error('getter exploded');
      },
    };
    expect(() => turnResultProblem(hostile)).toThrow('getter exploded');
  });
});

describe('the fast path of turnResultProblem', () => {
  // Mostly well-formed values with one thing off, so that both verdicts are common.
  const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
    fc.oneof({ arbitrary: good, weight: 6 }, { arbitrary: bad, weight: 1 });
  const role = mostly(fc.constantFrom('system', 'user', 'assistant', 'tool'), fc.constantFrom('robot', '', 1));
  const message = mostly(
    fc.record(
      { role, content: mostly(fc.string(), fc.integer()), name: fc.string() },
      { requiredKeys: ['role', 'content'] },
    ),
    fc.anything(),
  );
  const action = mostly(
    fc.constantFrom(Action.Continue, Action.GracefulStop, Action.ForceStop, Action.transition('t'), Action.reject('r')),
    fc.oneof(
      fc.record({ type: fc.constantFrom('transition', 'custom', 'teleport'), target: fc.string(), name: fc.string() }),
      fc.anything(),
    ),
  );
  const result = mostly(
    fc.record(
      {
        messages: mostly(fc.array(message, { maxLength: 3 }), fc.anything()),
        status: mostly(
          fc.constantFrom('completed', 'paused'),
          fc.oneof(fc.constantFrom('done', 1, null), fc.anything()),
        ),
        actions: mostly(fc.array(action, { maxLength: 3 }), fc.anything()),
        state: fc.anything(),
        output: fc.anything(),
      },
      { requiredKeys: [] },
    ),
    fc.anything(),
  );

  it('property: accepts only what the schema accepts, and the schema accepts every well-formed result', () => {
    fc.assert(
      fc.property(result, (value) => {
        const fast = isWellFormedTurnResult(value);
        const schema = turnResultSchema.safeParse(value).success;
        // The fast path is the schema's rule: a difference either way would be a second rule.
        expect(fast).toBe(schema);
        expect(turnResultProblem(value) === undefined).toBe(schema);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('a turn whose result is not a TurnResult', () => {
  it('fails with TURN_RESULT_INVALID naming the agent, the path and the bad value', async () => {
    const store = new MemoryCheckpointStore();
    const engine = (async () => ({ messages: [{ role: 'robot', content: 'hi' }] })) as unknown as EngineFn;
    const runner = createRunner({ store, agents: [{ id: 'main', engine }] });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome.status).toBe('failed');
    expect(RunnerError.isInstance(outcome.error)).toBe(true);
    expect(outcome.error).toMatchObject({ code: 'TURN_RESULT_INVALID' });
    expect(outcome.error?.message).toBe(
      'Engine of agent "main" returned a TurnResult whose messages[0].role is "robot", expected "system", "user", "assistant" or "tool"',
    );
    await runner.close();
  });
});
