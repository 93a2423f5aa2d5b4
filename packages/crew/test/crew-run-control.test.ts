import { afterEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import {
  AbortedError,
  ConfigError,
  SignalyardError,
  type ChatModel,
  type ChatRequest,
  type Tool,
} from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import {
  CrewExecutor,
  CrewRunError,
  resolveCrewConfig,
  type CrewConfigInput,
  type CrewEvent,
  type CrewState,
} from '@signalyard/crew';
import { collect, deafModel, deferred, endOf, hangingModel, runError, trace } from './crew-support.js';

afterEach(() => {
  vi.useRealTimers();
});

/** desk (waits for the user) → expert by [EXPERT]; expert back to desk by [DESK]; [BYE] ends. */
const deskCrew: CrewConfigInput = {
  entryPoint: 'desk',
  agents: [{ id: 'desk' }, { id: 'expert' }, { id: 'archivist' }],
  routing: {
    signals: {
      desk: [
        { signal: '[EXPERT]', target: 'expert' },
        { signal: '[BYE]', target: '' },
      ],
      expert: [{ signal: '[DESK]', target: 'desk' }],
    },
    agentBehaviors: { desk: { waitForSignal: true }, archivist: { isTerminal: true } },
  },
};

describe('CrewExecutor: pause and resume', () => {
  it('pauses at a wait_for_signal agent and resumes there on the next run with the returned state', async () => {
    const model = scriptedModel({
      desk: ['Hello! What do you need?', 'Let me ask. [EXPERT]', 'Anything else?'],
      expert: ['It is 42. [DESK]'],
    });
    const executor = new CrewExecutor({ crew: deskCrew, model });

    const first = await collect(executor, 'hi');
    const paused = endOf(first);
    expect(paused).toMatchObject({
      reason: 'paused',
      agentId: 'desk',
      pausedAgentId: 'desk',
      isTerminal: false,
      handoffs: 0,
    });
    expect(paused.state.pausedAgentId).toBe('desk');
    expect(first.slice(-2)).toEqual([{ type: 'pause', agentId: 'desk' }, expect.objectContaining({ type: 'end' })]);
    expect(JSON.parse(JSON.stringify(paused.state))).toEqual(paused.state); // plain JSON

    const second = await executor.execute('what is the answer?', { state: paused.state });
    expect(second).toMatchObject({ reason: 'paused', agentId: 'desk', content: 'Anything else?', handoffs: 2 });
    expect(second.state.history.map((m) => m.content)).toEqual([
      'hi',
      'Hello! What do you need?',
      'what is the answer?',
      'Let me ask. [EXPERT]',
      'It is 42. [DESK]',
      'Anything else?',
    ]);
    // The given state is never modified.
    expect(paused.state.history).toHaveLength(2);
  });

  it('starts a resumed run at state.pausedAgentId rather than the entry point', async () => {
    const model = scriptedModel({ expert: ['resumed here [DESK]'], desk: ['back'] });
    const state: CrewState = { history: [{ role: 'user', content: 'earlier' }], pausedAgentId: 'expert' };
    const events = await collect(new CrewExecutor({ crew: deskCrew, model }), 'continue', { state });
    expect(trace(events)[0]).toBe('agent_start:expert');
    const response = endOf(events);
    expect(response.state).not.toHaveProperty('pausedAgentId', 'expert');
    expect(response.state.pausedAgentId).toBe('desk');
  });

  it('resumeAgentId wins over state.pausedAgentId', async () => {
    const model = scriptedModel({ archivist: ['filed'] });
    const state: CrewState = { history: [], pausedAgentId: 'desk' };
    const response = await new CrewExecutor({ crew: deskCrew, model }).execute('file it', {
      state,
      resumeAgentId: 'archivist',
    });
    expect(response).toMatchObject({ agentId: 'archivist', reason: 'terminal_agent', isTerminal: true });
    expect(response.state).toEqual({
      history: [
        { role: 'user', content: 'file it' },
        { role: 'assistant', content: 'filed', name: 'archivist' },
      ],
    });
  });

  it('an unknown resumeAgentId fails with CREW_UNKNOWN_AGENT, carrying the given state unchanged', async () => {
    const state: CrewState = { history: [{ role: 'user', content: 'kept' }] };
    const executor = new CrewExecutor({ crew: deskCrew, model: scriptedModel([]) });
    const error = await runError(executor.execute('x', { state, resumeAgentId: 'ghost' }));
    expect(error).toMatchObject({
      code: 'CREW_UNKNOWN_AGENT',
      agentId: 'ghost',
      state: { history: [{ role: 'user', content: 'kept' }] },
    });
    expect(error.message).toContain('"ghost"');
    expect(error.message).toContain('"desk", "expert", "archivist"');
    const events = await collect(executor, 'x', { state: { history: [], pausedAgentId: 'gone' } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'error', error: { code: 'CREW_UNKNOWN_AGENT', agentId: 'gone' } });
  });
});

describe('CrewExecutor: failures and abort', () => {
  const pair: CrewConfigInput = {
    entryPoint: 'a',
    agents: [{ id: 'a' }, { id: 'b' }],
    routing: { signals: { a: [{ signal: '[B]', target: 'b' }], b: [{ signal: '[END]', target: '' }] } },
  };

  it('a throwing model fails the run with CREW_AGENT_FAILED naming the agent, with the error as cause and the history so far', async () => {
    const cause = new Error('503 from the provider');
    const model: Record<string, ChatModel> = {
      a: scriptedModel(['to b [B]']),
      b: { generate: () => Promise.reject(cause) },
    };
    const events = await collect(new CrewExecutor({ crew: pair, model }), 'go');
    const last = events.at(-1);
    if (last?.type !== 'error') throw new Error('expected an error event');
    expect(last.error).toMatchObject({ code: 'CREW_AGENT_FAILED', agentId: 'b' });
    expect(last.error.message).toContain('"b"');
    expect(last.error.message).toContain('503 from the provider');
    expect(last.error.cause).toBe(cause);
    expect(last.state.history.map((m) => m.content)).toEqual(['go', 'to b [B]']);
    expect(last.state).toBe(last.error.state);
    expect(trace(events).slice(-2)).toEqual(['agent_start:b', 'error']);
  });

  it('a model that throws synchronously, or returns something that is not a ChatResponse, fails the agent too', async () => {
    const sync: ChatModel = {
      generate: () => {
        throw new Error('sync boom');
      },
    };
    expect(await runError(new CrewExecutor({ crew: pair, model: sync }).execute('go'))).toMatchObject({
      code: 'CREW_AGENT_FAILED',
      agentId: 'a',
    });
    for (const bad of [
      null,
      'text',
      { content: 5 },
      { content: 'x', toolCalls: 'no' },
      { content: 'x', toolCalls: [{ name: 't' }] },
      { content: 'x', toolCalls: [null] },
      { content: 'x', toolCalls: [{ id: '1', name: 2 }] },
    ]) {
      const model = { generate: () => Promise.resolve(bad) } as unknown as ChatModel;
      const error = await runError(new CrewExecutor({ crew: pair, model }).execute('go'));
      expect(error.code).toBe('CREW_AGENT_FAILED');
      expect(error.message).toMatch(/^Agent "a" failed: its model returned /);
    }
  });

  it('aborting mid-call stops the model call in flight and fails with ABORTED (its cause the AbortedError)', async () => {
    vi.useFakeTimers();
    const model = scriptedModel(['never seen'], { delayMs: 1000 });
    const controller = new AbortController();
    const settled = runError(new CrewExecutor({ crew: pair, model }).execute('go', { abortSignal: controller.signal }));
    await vi.advanceTimersByTimeAsync(500);
    controller.abort('user pressed stop');
    const error = await settled;
    expect(error.code).toBe('ABORTED');
    expect(AbortedError.isInstance(error)).toBe(false); // one object is one class
    expect(AbortedError.isInstance(error.cause)).toBe(true);
    expect(CrewRunError.isInstance(error)).toBe(true);
    expect(error.agentId).toBe('a');
    expect(model.calls[0]!.abortSignal!.aborted).toBe(true);
    expect(error.state.history).toEqual([{ role: 'user', content: 'go' }]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('aborting stops a model that ignores its abortSignal, and a tool in flight', async () => {
    const controller = new AbortController();
    const deaf = deafModel();
    const settled = runError(
      new CrewExecutor({ crew: pair, model: deaf }).execute('go', { abortSignal: controller.signal }),
    );
    await Promise.resolve();
    controller.abort();
    expect((await settled).code).toBe('ABORTED');

    const started = deferred<AbortSignal | undefined>();
    const slowTool: Tool = {
      name: 'slow',
      parameters: {},
      execute: (_args, ctx) => {
        started.resolve(ctx.abortSignal);
        return new Promise(() => undefined);
      },
    };
    const crew: CrewConfigInput = { entryPoint: 'a', agents: [{ id: 'a', tools: ['slow'] }] };
    const model = scriptedModel([
      {
        content: '',
        toolCalls: [
          { id: '1', name: 'slow', arguments: {} },
          { id: '2', name: 'slow', arguments: {} },
        ],
      },
    ]);
    const c2 = new AbortController();
    const run = runError(
      new CrewExecutor({ crew, model, tools: [slowTool] }).execute('go', { abortSignal: c2.signal }),
    );
    const toolSignal = await started.promise;
    c2.abort();
    const error = await run;
    expect(error.code).toBe('ABORTED');
    expect(toolSignal?.aborted).toBe(true);
    // Both calls are answered in the state (the first aborted, the second never run).
    expect(error.state.history.filter((m) => m.role === 'tool').map((m) => m.toolCallId)).toEqual(['1', '2']);
  });

  it('an abort between two tool calls answers the rest without running them', async () => {
    const controller = new AbortController();
    let runs = 0;
    const tool: Tool = {
      name: 't',
      parameters: {},
      execute: () => {
        runs++;
        const p = Promise.resolve('ok');
        // Abort only after the result has been taken: two microtask hops later.
        void p.then(() =>
          Promise.resolve().then(() => {
            controller.abort();
          }),
        );
        return p;
      },
    };
    const crew: CrewConfigInput = { entryPoint: 'a', agents: [{ id: 'a', tools: ['t'] }] };
    const model = scriptedModel([
      {
        content: '',
        toolCalls: [
          { id: '1', name: 't', arguments: {} },
          { id: '2', name: 't', arguments: {} },
        ],
      },
    ]);
    const error = await runError(
      new CrewExecutor({ crew, model, tools: [tool] }).execute('go', { abortSignal: controller.signal }),
    );
    expect(error.code).toBe('ABORTED');
    expect(runs).toBe(1);
    expect(error.state.history.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'ok',
      'Error: not run: the run was aborted',
    ]);
  });

  it('a signal aborted before the run starts fails at once, without calling the model', async () => {
    const model = scriptedModel(['x']);
    const error = await runError(
      new CrewExecutor({ crew: pair, model }).execute('go', { abortSignal: AbortSignal.abort('early') }),
    );
    expect(error.code).toBe('ABORTED');
    expect(model.calls).toHaveLength(0);
    expect(error.cause).toSatisfy((c: unknown) => AbortedError.isInstance(c) && c.cause === 'early');
  });

  it('a model rejecting with its own AbortedError while the run is not aborted is an agent failure', async () => {
    const model: ChatModel = { generate: () => Promise.reject(new AbortedError({ message: 'provider timeout' })) };
    expect((await runError(new CrewExecutor({ crew: pair, model }).execute('go'))).code).toBe('CREW_AGENT_FAILED');
  });

  it('stopping the stream early aborts the run: the model call in flight gets its abortSignal', async () => {
    const model = hangingModel();
    const executor = new CrewExecutor({ crew: pair, model });
    for await (const event of executor.executeStream('go')) {
      if (event.type === 'agent_start') break;
    }
    await Promise.resolve();
    expect(model.requests[0]!.abortSignal!.aborted).toBe(true);
  });
});

describe('CrewExecutor: interruptSignal ends the run at its next safe point', () => {
  const crew: CrewConfigInput = { entryPoint: 'a', agents: [{ id: 'a', tools: ['t'] }] };
  const twoCalls = {
    content: 'working',
    toolCalls: [
      { id: '1', name: 't', arguments: {} },
      { id: '2', name: 't', arguments: {} },
    ],
  };

  it('a tool call in flight finishes (its abortSignal never fires); the next call does not start; the state holds what completed', async () => {
    const interrupt = new AbortController();
    const inFlight = deferred();
    const release = deferred<string>();
    const toolSignals: AbortSignal[] = [];
    const tool: Tool = {
      name: 't',
      parameters: {},
      execute: (_args, ctx) => {
        toolSignals.push(ctx.abortSignal as AbortSignal);
        inFlight.resolve();
        return release.promise;
      },
    };
    const model = scriptedModel([twoCalls, 'never asked']);
    const running = runError(
      new CrewExecutor({ crew, model, tools: [tool] }).execute('go', { interruptSignal: interrupt.signal }),
    );
    await inFlight.promise;
    interrupt.abort();
    expect(toolSignals[0]?.aborted).toBe(false);
    release.resolve('done once');
    const error = await running;
    expect(error.code).toBe('ABORTED');
    expect(toolSignals).toHaveLength(1);
    expect(model.calls).toHaveLength(1);
    expect(error.state.history.map((m) => [m.role, m.content])).toEqual([
      ['user', 'go'],
      ['assistant', 'working'],
      ['tool', 'done once'],
      ['tool', 'Error: not run: the run was interrupted'],
    ]);
  });

  it('fired before the run starts: no model call is made; never fired: the run is as without it', async () => {
    const model = scriptedModel(['x']);
    const error = await runError(
      new CrewExecutor({ crew: { entryPoint: 'a', agents: [{ id: 'a' }] }, model }).execute('go', {
        interruptSignal: AbortSignal.abort(),
      }),
    );
    expect(error.code).toBe('ABORTED');
    expect(model.calls).toHaveLength(0);
    expect(error.state.history).toEqual([{ role: 'user', content: 'go' }]);
    const quiet = new AbortController();
    const done = await new CrewExecutor({
      crew: { entryPoint: 'a', agents: [{ id: 'a' }] },
      model: scriptedModel(['fine']),
    }).execute('go', {
      interruptSignal: quiet.signal,
    });
    expect(done.content).toBe('fine');
  });
});

describe('CrewExecutor: runs are independent', () => {
  it('two concurrent runs on one executor never share history', async () => {
    const gates = { one: deferred<undefined>(), two: deferred<undefined>() };
    const model = scriptedModel(async (request: ChatRequest) => {
      const input = request.messages.find((m) => m.role === 'user')!.content;
      await gates[input as 'one' | 'two'].promise;
      return `${request.agentId ?? '?'} answers ${input} after ${request.messages.length} messages`;
    });
    const crew: CrewConfigInput = { entryPoint: 'a', agents: [{ id: 'a' }, { id: 'b' }], settings: { maxHandoffs: 2 } };
    const executor = new CrewExecutor({ crew, model });
    const one = executor.execute('one');
    const two = executor.execute('two');
    gates.two.resolve(undefined);
    const second = await two;
    gates.one.resolve(undefined);
    const first = await one;
    expect(first.state.history.map((m) => m.content)).toEqual([
      'one',
      'a answers one after 1 messages',
      'b answers one after 2 messages',
    ]);
    expect(second.state.history.map((m) => m.content)).toEqual([
      'two',
      'a answers two after 1 messages',
      'b answers two after 2 messages',
    ]);
  });

  it('one model per agent: each agent’s calls go to its own model', async () => {
    const a = scriptedModel(['[B]']);
    const b = scriptedModel(['[END]']);
    const crew: CrewConfigInput = {
      entryPoint: 'a',
      agents: [{ id: 'a' }, { id: 'b' }],
      routing: { signals: { a: [{ signal: '[B]', target: 'b' }], b: [{ signal: '[END]', target: '' }] } },
    };
    await new CrewExecutor({ crew, model: { a, b } }).execute('go');
    expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
  });
});

describe('CrewExecutor: the event stream', () => {
  const agents = ['a', 'b', 'c'];
  const crew = resolveCrewConfig({
    entryPoint: 'a',
    agents: agents.map((id) => ({ id })),
    settings: { maxHandoffs: 4, maxRounds: 8, maxToolRounds: 1 },
    routing: {
      signals: {
        a: [
          { signal: '[B]', target: 'b' },
          { signal: '[G]', target: 'g' },
          { signal: '[END]', target: '' },
        ],
        b: [{ signal: '[C]', target: 'c' }],
      },
      agentBehaviors: { c: { waitForSignal: true } },
      parallelGroups: { g: { agents: ['b', 'c'], nextAgent: 'a' } },
    },
  });
  const step = fc.oneof(
    fc.constantFrom('[B]', '[G]', '[END]', '[C]', 'nothing', '[b] [end]'),
    fc.constant({ content: 'tool', toolCalls: [{ id: 't', name: 'missing', arguments: null }] }),
    fc.constant('THROW'),
  );

  it('always ends with exactly one end or error event, then finishes normally (any script)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 12 }), async (script) => {
        let i = 0;
        const model = scriptedModel(() => {
          const s = script[i++] ?? 'nothing';
          if (s === 'THROW') throw new Error('scripted failure');
          return s;
        });
        const executor = new CrewExecutor({ crew, model });
        const events = await collect(executor, 'go');
        const finals = events.filter((e) => e.type === 'end' || e.type === 'error');
        expect(finals).toHaveLength(1);
        expect(events.at(-1)).toBe(finals[0]);
        expect(model.calls.length).toBeLessThanOrEqual(crew.settings.maxRounds);
        const handoffs = events.filter((e) => e.type === 'handoff').length;
        expect(handoffs).toBeLessThan(crew.settings.maxHandoffs);
        if (finals[0]!.type === 'end') expect(finals[0]!.response.handoffs).toBe(handoffs);
      }),
      { numRuns: 200 },
    );
  });

  it('execute() and executeStream() agree on the outcome', async () => {
    const script = ['[B]', '[C]', 'waiting'];
    const viaStream = endOf(await collect(new CrewExecutor({ crew, model: scriptedModel(script) }), 'go'));
    const viaExecute = await new CrewExecutor({ crew, model: scriptedModel(script) }).execute('go');
    expect(viaExecute).toEqual(viaStream);
  });
});

describe('CrewExecutor: bad input', () => {
  const crew: CrewConfigInput = { entryPoint: 'a', agents: [{ id: 'a' }, { id: 'b' }] };
  const executor = new CrewExecutor({ crew, model: scriptedModel(() => 'x') });

  it.each<[string, unknown, unknown]>([
    ['a non-string input', 42, undefined],
    ['options that are not an object', 'go', 'fast'],
    ['an unknown option (a typo)', 'go', { signal: new AbortController().signal }],
    ['a state without history', 'go', { state: {} }],
    ['a state that is not an object', 'go', { state: 'nope' }],
    ['a history holding a non-message', 'go', { state: { history: [{ role: 'robot', content: 'x' }] } }],
    ['a history message without string content', 'go', { state: { history: [{ role: 'user', content: 1 }] } }],
    [
      'a history message with malformed tool calls',
      'go',
      { state: { history: [{ role: 'assistant', content: '', toolCalls: [{}] }] } },
    ],
    [
      'a history message with a non-string name',
      'go',
      { state: { history: [{ role: 'user', content: '', name: 3 }] } },
    ],
    [
      'a history message with a non-string toolCallId',
      'go',
      { state: { history: [{ role: 'tool', content: '', toolCallId: 3 }] } },
    ],
    ['a history entry that is not an object', 'go', { state: { history: [null] } }],
    ['a non-string pausedAgentId', 'go', { state: { history: [], pausedAgentId: 1 } }],
    ['a non-string resumeAgentId', 'go', { resumeAgentId: 7 }],
    ['an abortSignal that is not one', 'go', { abortSignal: { aborted: false } }],
    ['an interruptSignal that is not one', 'go', { interruptSignal: 'now' }],
  ])('%s ends the run with CREW_ARGUMENT_INVALID, as an error event and a rejection', async (_what, input, opts) => {
    const error = await runError(executor.execute(input as string, opts as never));
    expect(error.code).toBe('CREW_ARGUMENT_INVALID');
    expect(error).toBeInstanceOf(SignalyardError);
    const events = await collect(executor, input as string, opts as never);
    expect(events).toEqual([
      { type: 'error', error: expect.objectContaining({ code: 'CREW_ARGUMENT_INVALID' }), state: expect.anything() },
    ]);
  });

  it('accepts tool-call histories written by hand (toolCalls and toolCallId)', async () => {
    const state: CrewState = {
      history: [
        { role: 'assistant', content: '', name: 'a', toolCalls: [{ id: '1', name: 't', arguments: {} }] },
        { role: 'tool', content: 'r', toolCallId: '1' },
      ],
    };
    await expect(executor.execute('go', { state })).resolves.toMatchObject({ reason: 'max_handoffs' });
  });

  it('the constructor validates a crew written in code with the same schema (ConfigError)', () => {
    const error = (() => {
      try {
        new CrewExecutor({
          crew: { entryPoint: 'nobody', agents: [{ id: 'a' }], settings: { maxHandoffs: 0 } },
          model: scriptedModel([]),
        });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path)).toEqual(
      expect.arrayContaining(['entryPoint', 'settings.maxHandoffs']),
    );
  });

  it.each<[string, () => unknown, string[]]>([
    ['options that are not an object', () => new CrewExecutor(null as never), ['']],
    ['an unknown option', () => new CrewExecutor({ crew, model: scriptedModel([]), modle: 1 } as never), ['modle']],
    ['a model that is not a ChatModel', () => new CrewExecutor({ crew, model: 5 as never }), ['model']],
    [
      'a model record missing an agent and naming a stranger',
      () => new CrewExecutor({ crew, model: { a: scriptedModel([]), z: scriptedModel([]) } }),
      ['model.z', 'model.b'],
    ],
    [
      'a model record entry that is not a ChatModel',
      () => new CrewExecutor({ crew, model: { a: scriptedModel([]), b: {} as never } }),
      ['model.b'],
    ],
    [
      'tools that are not a list',
      () => new CrewExecutor({ crew, model: scriptedModel([]), tools: {} as never }),
      ['tools'],
    ],
    [
      'malformed and duplicate tools',
      () =>
        new CrewExecutor({
          crew,
          model: scriptedModel([]),
          tools: [
            null,
            { name: '', parameters: {}, execute: () => Promise.resolve() },
            { name: 't', execute: 1 },
            { name: 'd', parameters: {}, execute: () => Promise.resolve() },
            { name: 'd', parameters: {}, execute: () => Promise.resolve() },
          ] as never,
        }),
      ['tools[0]', 'tools[1].name', 'tools[2].execute', 'tools[2].parameters', 'tools[4].name'],
    ],
    [
      'an agent naming a tool the executor was not given',
      () =>
        new CrewExecutor({
          crew: { entryPoint: 'a', agents: [{ id: 'a', tools: ['ghost'] }] },
          model: scriptedModel([]),
        }),
      ['crew.agents[0].tools[0]'],
    ],
  ])('the constructor rejects %s with a ConfigError listing every problem', (_what, make, paths) => {
    let error: unknown;
    try {
      make();
    } catch (e) {
      error = e;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path)).toEqual(paths);
  });

  it('keeps the resolved crew, defaults filled in', () => {
    expect(executor.crew.settings.maxHandoffs).toBe(5);
    expect(Object.isFrozen(executor.crew)).toBe(true);
  });
});

describe('CrewRunError', () => {
  class SubRunError extends CrewRunError {}
  const state: CrewState = { history: [] };

  it('isInstance matches its own instances and subclasses only', () => {
    const own = new CrewRunError({ code: 'CREW_TOOL_LOOP', message: 'm', state });
    expect(CrewRunError.isInstance(own)).toBe(true);
    expect(CrewRunError.isInstance(new SubRunError({ code: 'CREW_AGENT_FAILED', message: 'm', state }))).toBe(true);
    expect(CrewRunError.isInstance(new SignalyardError({ code: 'CREW_TOOL_LOOP', message: 'm' }))).toBe(false);
    expect(CrewRunError.isInstance(new AbortedError())).toBe(false);
    expect(CrewRunError.isInstance(new Error('m'))).toBe(false);
    expect(CrewRunError.isInstance({ code: 'CREW_TOOL_LOOP', state })).toBe(false);
    expect(CrewRunError.isInstance(undefined)).toBe(false);
    expect(SignalyardError.isInstance(own)).toBe(true);
    expect(AbortedError.isInstance(own)).toBe(false);
    expect(ConfigError.isInstance(own)).toBe(false);
  });

  it('carries code, state, agentId, group and cause; only ABORTED errors are also AbortedErrors', () => {
    const cause = new Error('c');
    const error = new CrewRunError({
      code: 'CREW_PARALLEL_FAILED',
      message: 'no member',
      state,
      agentId: 'a',
      group: 'g',
      cause,
    });
    expect(error).toMatchObject({
      name: 'CrewRunError',
      code: 'CREW_PARALLEL_FAILED',
      message: 'no member',
      state,
      agentId: 'a',
      group: 'g',
      cause,
    });
    expect(new CrewRunError({ code: 'CREW_UNKNOWN_AGENT', message: 'm', state })).not.toHaveProperty('group');
    expect(AbortedError.isInstance(new CrewRunError({ code: 'ABORTED', message: 'm', state }))).toBe(false);
  });

  it('is what every failed run rejects with and ends its stream with', async () => {
    const events: CrewEvent[] = await collect(
      new CrewExecutor({ crew: { entryPoint: 'a', agents: [{ id: 'a' }] }, model: scriptedModel([]) }),
      'go',
    );
    expect(events.at(-1)).toMatchObject({ type: 'error' });
    const last = events.at(-1);
    expect(last?.type === 'error' && CrewRunError.isInstance(last.error)).toBe(true);
  });
});
