import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Action, MemoryCheckpointStore, SignalKind, signal, type ChatMessage } from '@signalyard/core';
import { createRunner, type TurnResult } from 'signalyard';
import {
  FINISH,
  MAIN,
  START,
  assistant,
  echoEngine,
  heldEngine,
  phaseFsm,
  phaseRoutes,
  stored,
  user,
} from './support.js';

describe('the history rule: what arrived is recorded', () => {
  it.each([
    { what: 'a string payload', payload: 'hello' },
    { what: 'a { text } payload', payload: { text: 'hello', extra: 1 } },
  ])('a user_message with $what appends { role: "user", content } before the engine runs', async ({ payload }) => {
    const { engine, seen } = echoEngine();
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, agents: [{ id: 'main', engine }] });
    await runner.dispatch(MAIN, signal(SignalKind.UserMessage, payload));
    expect(seen[0]?.history).toEqual([user('hello')]);
    expect((await stored(store, MAIN)).data.history).toEqual([user('hello'), assistant('echo: hello')]);
    await runner.close();
  });

  it('handle() appends the message text', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: async () => ({}) }] });
    await runner.handle({ channel: 'cli', text: 'from the cli' });
    expect((await runner.session(MAIN))?.history).toEqual([user('from the cli')]);
    await runner.close();
  });

  it('TurnContext.history holds the earlier turns and ends with the current user message', async () => {
    const { engine, seen } = echoEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine }] });
    await runner.handle({ channel: 'cli', text: 'one' });
    await runner.handle({ channel: 'cli', text: 'two' });
    expect(seen[1]?.history).toEqual([user('one'), assistant('echo: one'), user('two')]);
    await runner.close();
  });

  it.each([
    { what: 'a user_message without text', sig: signal(SignalKind.UserMessage, { attachment: 'x.png' }) },
    { what: 'a user_message with a numeric payload', sig: signal(SignalKind.UserMessage, 42) },
    { what: 'a user_message with a null payload', sig: signal(SignalKind.UserMessage) },
    { what: 'a tool_result with text', sig: signal(SignalKind.ToolResult, { text: 'tool says hi' }) },
    { what: 'a custom signal with a string payload', sig: signal(SignalKind.custom('note'), 'a note') },
  ])('$what adds nothing to the history', async ({ sig }) => {
    const { engine, seen } = echoEngine();
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine,
          routes: [
            { kind: SignalKind.ToolResult, action: Action.Continue },
            { kind: SignalKind.custom('note'), action: Action.Continue },
          ],
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'before' });
    const outcome = await runner.dispatch(MAIN, sig);
    expect(outcome.status).toBe('completed');
    expect(seen[1]?.history).toEqual([user('before'), assistant('echo: before')]);
    await runner.close();
  });

  it('the user message is saved when the signal is rejected', async () => {
    const store = new MemoryCheckpointStore();
    const { engine, seen } = echoEngine();
    const runner = createRunner({
      store,
      agents: [{ id: 'main', engine, routes: [{ kind: SignalKind.UserMessage, action: Action.reject('closed') }] }],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'anyone there?' });
    expect(outcome.status).toBe('rejected');
    expect(seen).toHaveLength(0);
    expect((await stored(store, MAIN)).data.history).toEqual([user('anyone there?')]);
    await runner.close();
  });

  it('the user message is saved when the engine fails, its messages and state are not', async () => {
    const store = new MemoryCheckpointStore();
    let fail = false;
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async () => {
            if (fail) throw new Error('model down');
            return { messages: [assistant('ok')], state: { turns: 1 } };
          },
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'one' });
    fail = true;
    const outcome = await runner.handle({ channel: 'cli', text: 'two' });
    expect(outcome.status).toBe('failed');
    const { data } = await stored(store, MAIN);
    expect(data.history).toEqual([user('one'), assistant('ok'), user('two')]);
    expect(data.engine).toEqual({ turns: 1 });
    await runner.close();
  });

  it("the user message is saved when the turn is stopped, the turn's effects are not", async () => {
    const store = new MemoryCheckpointStore();
    const held = heldEngine();
    const runner = createRunner({ store, agents: [{ id: 'main', engine: held.engine }] });
    const controller = new AbortController();
    const pending = runner.handle({ channel: 'cli', text: 'long job' }, { abortSignal: controller.signal });
    const turn = await held.turn(0);
    controller.abort();
    turn.finish({ messages: [assistant('too late')], state: { done: true } });
    expect((await pending).status).toBe('stopped');
    const { data } = await stored(store, MAIN);
    expect(data.history).toEqual([user('long job')]);
    expect(data.engine).toBeUndefined();
    await runner.close();
  });

  it('the user message is saved when TurnResult.actions are refused, the FSM change and engine output are not', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          strategy: () => phaseFsm().create(),
          engine: async () => ({
            messages: [assistant('starting twice')],
            state: { n: 1 },
            actions: [Action.transition('start'), Action.transition('start')],
          }),
        },
      ],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'go' });
    expect(outcome.status).toBe('rejected');
    const { data } = await stored(store, MAIN);
    expect(data.history).toEqual([user('go')]);
    expect(data.engine).toBeUndefined();
    expect(data.strategy).toEqual({ type: 'fsm', current_state: 'idle' });
    await runner.close();
  });

  it('engine messages are appended after the turn and its state replaces the previous state', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            const n = ((ctx.state as { n?: number } | undefined)?.n ?? 0) + 1;
            return {
              messages: [assistant(`a${n}`), { role: 'assistant', content: `b${n}`, name: 'helper' }],
              state: { n },
            };
          },
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'x' });
    await runner.handle({ channel: 'cli', text: 'y' });
    const { data } = await stored(store, MAIN);
    expect(data.history).toEqual([
      user('x'),
      assistant('a1'),
      { role: 'assistant', content: 'b1', name: 'helper' },
      user('y'),
      assistant('a2'),
      { role: 'assistant', content: 'b2', name: 'helper' },
    ]);
    expect(data.engine).toEqual({ n: 2 });
    await runner.close();
  });

  it('a turn result without a state key keeps the previous engine state', async () => {
    let turn = 0;
    const runner = createRunner({
      agents: [
        { id: 'main', engine: async (ctx) => (turn++ === 0 ? { state: { kept: true } } : { output: ctx.state }) },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'x' });
    const second = await runner.handle({ channel: 'cli', text: 'y' });
    expect(second.output).toEqual({ kept: true });
    expect((await runner.session(MAIN))?.engineState).toEqual({ kept: true });
    await runner.close();
  });

  it('a transition-only signal keeps the history and engine state as they were', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          strategy: () => phaseFsm().create(),
          routes: [...phaseRoutes],
          engine: async () => ({ messages: [assistant('hi')], state: 's' }),
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'x' });
    await runner.dispatch(MAIN, signal(START));
    await runner.dispatch(MAIN, signal(FINISH));
    const { data } = await stored(store, MAIN);
    expect(data.history).toEqual([user('x'), assistant('hi')]);
    expect(data.engine).toBe('s');
    await runner.close();
  });
});

describe('the history a turn sees is frozen', () => {
  it('freezes plain messages and the list that holds them, across turns and a reload from the store', async () => {
    const store = new MemoryCheckpointStore();
    const frozen: boolean[] = [];
    const agents = [
      {
        id: 'main',
        routes: [{ kind: SignalKind.Timer, name: 'tick', action: Action.Continue }],
        engine: async (ctx: { history: readonly ChatMessage[] }): Promise<TurnResult> => {
          frozen.push(Object.isFrozen(ctx.history) && ctx.history.every((m) => Object.isFrozen(m)));
          expect(() => (ctx.history as ChatMessage[]).push(user('sneaked in'))).toThrow(TypeError);
          return { messages: [{ role: 'assistant', content: `seen ${ctx.history.length}` }] };
        },
      },
    ];
    const runner = createRunner({ store, agents });
    for (const text of ['one', 'two']) await runner.dispatch(MAIN, signal(SignalKind.UserMessage, text));
    await runner.close();
    // A signal that adds no message sees the history as loaded from the store, frozen all the same.
    const reloaded = createRunner({ store, agents });
    await reloaded.dispatch(MAIN, signal(SignalKind.Timer));
    await reloaded.close();
    const again = createRunner({ store, agents }); // loads the history from the store
    await again.dispatch(MAIN, signal(SignalKind.UserMessage, 'three'));
    await again.close();
    const fresh = createRunner({ store, agents });
    await fresh.dispatch('agent:main:other', signal(SignalKind.Timer)); // a new session's empty history
    await fresh.close();
    expect(frozen).toEqual([true, true, true, true, true]);
    expect((await stored(store, MAIN)).data.history).toEqual([
      user('one'),
      assistant('seen 1'),
      user('two'),
      assistant('seen 3'),
      assistant('seen 4'),
      user('three'),
      assistant('seen 6'),
    ]);
  });

  it("keeps a deeply frozen copy of a message with tool calls: the engine's later changes never reach the store", async () => {
    const store = new MemoryCheckpointStore();
    const call = {
      role: 'assistant' as const,
      content: '',
      toolCalls: [{ id: 'c1', name: 'look', arguments: { q: 1 } }],
    };
    const lists: (readonly ChatMessage[])[] = [];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            lists.push(ctx.history);
            return lists.length === 1 ? { messages: [call] } : {};
          },
        },
      ],
    });
    await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'one'));
    call.toolCalls[0]!.arguments.q = 2; // the engine's object changes after the turn
    await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'two'));
    await runner.close();
    const kept = lists[1]![1] as typeof call;
    expect(kept).not.toBe(call);
    expect(Object.isFrozen(lists[1]) && Object.isFrozen(kept.toolCalls[0]!.arguments)).toBe(true);
    expect((await stored(store, MAIN)).data.history).toEqual([
      user('one'),
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'look', arguments: { q: 1 } }] },
      user('two'),
    ]);
  });

  it('keeps a message JSON alone can store (a toJSON inside) as it is, and stores it as JSON does', async () => {
    const store = new MemoryCheckpointStore();
    const at = new Date('2026-11-26T12:00:00.000Z');
    const lists: (readonly ChatMessage[])[] = [];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            lists.push(ctx.history);
            return lists.length === 1 ? { messages: [{ role: 'assistant', content: 'dated', at } as ChatMessage] } : {};
          },
        },
      ],
    });
    await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'one'));
    await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'two'));
    await runner.close();
    expect((lists[1]![1] as unknown as { at: unknown }).at).toBe(at);
    expect(Object.isFrozen(lists[1])).toBe(false);
    expect((await stored(store, MAIN)).data.history).toEqual([
      user('one'),
      { role: 'assistant', content: 'dated', at: '2026-11-26T12:00:00.000Z' },
      user('two'),
    ]);
  });
});

describe('maxHistoryMessages', () => {
  it('drops the oldest messages, both in what the engine sees and in what is saved', async () => {
    const { engine, seen } = echoEngine();
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, maxHistoryMessages: 3, agents: [{ id: 'main', engine }] });
    for (const text of ['a', 'b', 'c']) await runner.handle({ channel: 'cli', text });
    // a, echo a, b, echo b, c → the engine sees the newest 3 (echo a is gone) ...
    expect(seen[2]?.history).toEqual([user('b'), assistant('echo: b'), user('c')]);
    // ... and after its turn: the newest 3 again.
    expect((await stored(store, MAIN)).data.history).toEqual([assistant('echo: b'), user('c'), assistant('echo: c')]);
    await runner.close();
  });

  it('never leaves tool results at the start without the assistant message that called them', async () => {
    const store = new MemoryCheckpointStore();
    const toolTurn: ChatMessage[] = [
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 't1', name: 'search', arguments: {} },
          { id: 't2', name: 'search', arguments: {} },
        ],
      },
      { role: 'tool', content: 'r1', toolCallId: 't1' },
      { role: 'tool', content: 'r2', toolCallId: 't2' },
      assistant('answer'),
    ];
    const runner = createRunner({
      store,
      maxHistoryMessages: 4,
      agents: [{ id: 'main', engine: async () => ({ messages: toolTurn }) }],
    });
    await runner.handle({ channel: 'cli', text: 'q' });
    // [q, call, r1, r2, answer]: the newest 4 would start with the call — fine, kept.
    expect((await stored(store, MAIN)).data.history).toEqual(toolTurn);
    await runner.close();

    const store3 = new MemoryCheckpointStore();
    const runner3 = createRunner({
      store: store3,
      maxHistoryMessages: 3,
      agents: [{ id: 'main', engine: async () => ({ messages: toolTurn }) }],
    });
    await runner3.handle({ channel: 'cli', text: 'q' });
    // The newest 3 would be [r1, r2, answer]: the orphaned results go too.
    const history = (await stored(store3, MAIN)).data.history;
    expect(history).toEqual([assistant('answer')]);
    await runner3.close();
  });

  it('a new runner with a smaller limit shows its engine at most that many messages', async () => {
    const store = new MemoryCheckpointStore();
    const first = createRunner({ store, agents: [{ id: 'main', engine: echoEngine().engine }] });
    for (const text of ['a', 'b', 'c', 'd']) await first.handle({ channel: 'cli', text });
    await first.close();
    const { engine, seen } = echoEngine();
    const second = createRunner({ store, maxHistoryMessages: 2, agents: [{ id: 'main', engine }] });
    await second.handle({ channel: 'cli', text: 'e' });
    expect(seen[0]?.history).toEqual([assistant('echo: d'), user('e')]);
    await second.close();
  });

  it('property: each turn keeps the longest suffix that fits the limit without starting with a tool result (or the whole last tool-call group when nothing else fits)', async () => {
    const message: fc.Arbitrary<ChatMessage> = fc.oneof(
      fc.string({ maxLength: 3 }).map((content) => ({ role: 'assistant' as const, content })),
      fc.string({ maxLength: 3 }).map((content) => ({ role: 'tool' as const, content, toolCallId: 'c' })),
      fc.string({ maxLength: 3 }).map((content) => ({ role: 'system' as const, content })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(message, { maxLength: 5 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 8 }),
        async (turns, max) => {
          const store = new MemoryCheckpointStore();
          let i = 0;
          const runner = createRunner({
            store,
            maxHistoryMessages: max,
            agents: [{ id: 'main', engine: async (): Promise<TurnResult> => ({ messages: turns[i++] ?? [] }) }],
          });
          const log: ChatMessage[] = [];
          for (const [n, messages] of turns.entries()) {
            await runner.handle({ channel: 'cli', text: `u${n}` });
            log.push(user(`u${n}`), ...messages);
          }
          const history = (await stored(store, MAIN)).data.history;
          // Reference of the rule, applied as the runner applies it (after the user message, then
          // after the turn's messages): the longest suffix that fits and does not start with a tool
          // result; when only the empty one does, the last tool-call group is kept whole instead.
          const trim = (h: ChatMessage[]): ChatMessage[] => {
            if (h.length <= max) return h;
            for (let start = h.length - max; start < h.length; start++)
              if (h[start]?.role !== 'tool') return h.slice(start);
            let start = h.length - max;
            while (start > 0 && h[start]?.role === 'tool') start--;
            return h.slice(start);
          };
          let expected: ChatMessage[] = [];
          let at = 0;
          for (const messages of turns) {
            expected = trim([...expected, log[at] as ChatMessage]);
            if (messages.length > 0) expected = trim([...expected, ...messages]);
            at += 1 + messages.length;
          }
          expect(history).toEqual(expected);
          await runner.close();
        },
      ),
      { numRuns: 60 },
    );
  });
});
