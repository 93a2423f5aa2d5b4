import { describe, expect, expectTypeOf, it } from 'vitest';
import { SignalyardError, type ChatModel } from '@signalyard/core';
import {
  definePipeline,
  Envelope,
  PipelineRuntime,
  PipelineUsageError,
  type PipelineEvent,
  type StageContext,
  type TerminalReason,
} from '@signalyard/pipeline';
import { collect, deferred, echoModel, rejectsCode, runtimeOf, stage, throwsCode, types } from './support.js';

describe('PipelineRuntime.run: stages and outputs', () => {
  it('runs stages where routed and completes at end', async () => {
    const runtime = runtimeOf({
      stages: [stage('a', { x: 1 }, { defaultNext: 'b' }), stage('b', { y: 2 }), stage('never', { z: 3 })],
    });
    const env = await runtime.run('input');
    expect(env).toBeInstanceOf(Envelope);
    expect(env).toMatchObject({
      input: 'input',
      terminated: true,
      terminalReason: 'completed',
      currentStage: 'end',
      agentHops: 2,
      iteration: 0,
      llmCalls: 0,
      mode: 'sequential',
      completedStages: ['a', 'b'],
      skippedStages: [],
      errors: [],
    });
    expect(env.outputs).toEqual({ a: { x: 1 }, b: { y: 2 } });
    expect(env.trace.map((t) => [t.stage, t.next])).toEqual([
      ['a', 'b'],
      ['b', 'end'],
    ]);
    expect(env.edgeTraversals).toEqual({ 'a->b': 1 });
    expect(env.interrupt).toBeUndefined();
    expect(env.terminationReason).toBeUndefined();
  });

  it('flows only where routed: with no defaultNext only the first stage runs', async () => {
    const env = await runtimeOf({ stages: [stage('a'), stage('b')] }).run(null);
    expect(env.trace.map((t) => t.stage)).toEqual(['a']);
    expect(env.terminalReason).toBe('completed');
  });

  it('gives each stage the input, the outputs so far, its name and an abort signal', async () => {
    const seen: unknown[] = [];
    const runtime = runtimeOf({
      stages: [
        stage('a', { n: 1 }, { defaultNext: 'b', outputKey: 'first' }),
        {
          name: 'b',
          run: (ctx: StageContext) => {
            seen.push(ctx.stage, ctx.input, { ...ctx.outputs }, ctx.abortSignal.aborted, ctx.response, ctx.model);
            return {};
          },
        },
      ],
    });
    await runtime.run({ q: 'why' });
    expect(seen).toEqual(['b', { q: 'why' }, { first: { n: 1 } }, false, undefined, undefined]);
  });

  it('gives each stage a snapshot of the envelope as it stands', async () => {
    let snapshot: Envelope | undefined;
    const runtime = runtimeOf({
      stages: [
        stage('a', { n: 1 }, { defaultNext: 'b' }),
        {
          name: 'b',
          run: (ctx: StageContext) => {
            snapshot = ctx.envelope;
            expect(ctx.envelope).toBe(snapshot);
            return { m: 2 };
          },
        },
      ],
    });
    const env = await runtime.run('in', { envelopeId: 'run-1' });
    expect(snapshot).toBeInstanceOf(Envelope);
    expect(snapshot).toMatchObject({
      id: 'run-1',
      currentStage: 'b',
      terminated: false,
      agentHops: 2,
      outputs: { a: { n: 1 } },
    });
    expect(snapshot!.trace).toHaveLength(1);
    expect(env.outputs).toEqual({ a: { n: 1 }, b: { m: 2 } });
  });

  it('stores outputs under outputKey, the latest execution winning', async () => {
    let n = 0;
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          outputKey: 'shared',
          run: () => ({ n: ++n }),
          routingRules: [{ condition: 'n', value: 1, target: 'a' }],
        },
      ],
    });
    const env = await runtime.run(null);
    expect(env.outputs).toEqual({ shared: { n: 2 } });
  });

  it('treats undefined as {} and drops keys whose value is undefined', async () => {
    const runtime = runtimeOf({
      stages: [stage('a', undefined, { defaultNext: 'b' }), { name: 'b', run: () => ({ kept: 1, gone: undefined }) }],
    });
    const env = await runtime.run(null);
    expect(env.outputs.a).toEqual({});
    expect(Object.keys(env.outputs.b as object)).toEqual(['kept']);
  });

  it('accepts async stages and null-prototype outputs', async () => {
    const out = Object.assign(Object.create(null) as Record<string, unknown>, { v: 1 });
    const runtime = runtimeOf({ stages: [{ name: 'a', run: async () => out }] });
    const env = await runtime.run(null);
    expect(env.outputs.a).toEqual({ v: 1 });
  });

  it('keeps an own "__proto__" output key as data, without touching prototypes', async () => {
    const out = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>;
    const env = await runtimeOf({ stages: [{ name: 'a', run: () => out }] }).run(null);
    const stored = env.outputs.a as Record<string, unknown>;
    expect(Object.keys(stored)).toEqual(['__proto__', 'ok']);
    expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('copies and freezes outputs, so later changes by the stage do not leak in', async () => {
    const out = { list: [1], n: 1 };
    const env = await runtimeOf({ stages: [{ name: 'a', run: () => out }] }).run(null);
    out.n = 2;
    expect(env.outputs.a).toEqual({ list: [1], n: 1 });
    expect(Object.isFrozen(env.outputs.a)).toBe(true);
  });

  it('runs concurrent runs on one runtime independently', async () => {
    const runtime = runtimeOf({
      stages: [{ name: 'a', run: async (ctx) => ({ doubled: (ctx.input as number) * 2 }) }],
    });
    const envs = await Promise.all([1, 2, 3].map((n) => runtime.run(n)));
    expect(envs.map((e) => (e.outputs.a as { doubled: number }).doubled)).toEqual([2, 4, 6]);
    expect(new Set(envs.map((e) => e.id)).size).toBe(3);
  });
});

describe('PipelineRuntime.run: routing rules', () => {
  const verdictPipeline = (verdict: unknown) =>
    runtimeOf({
      stages: [
        {
          name: 'judge',
          run: () => ({ verdict }),
          routingRules: [
            { condition: 'verdict', value: 'revise', target: 'revise' },
            { condition: 'verdict', value: 'publish', target: 'publish' },
            { condition: 'verdict', value: 'revise', target: 'publish' },
          ],
          defaultNext: 'fallback',
        },
        stage('revise'),
        stage('publish'),
        stage('fallback'),
      ],
    });

  it('takes the first matching rule', async () => {
    const env = await verdictPipeline('revise').run(null);
    expect(env.trace.map((t) => t.stage)).toEqual(['judge', 'revise']);
  });

  it('falls back to defaultNext when no rule matches', async () => {
    const env = await verdictPipeline('unsure').run(null);
    expect(env.trace.map((t) => t.stage)).toEqual(['judge', 'fallback']);
  });

  it('never matches an absent key, even against a rule value of null', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => ({ other: 1, undef: undefined }),
          routingRules: [
            { condition: 'missing', value: null, target: 'b' },
            { condition: 'undef', value: null, target: 'b' },
          ],
        },
        stage('b'),
      ],
    });
    const env = await runtime.run(null);
    expect(env.trace.map((t) => t.next)).toEqual(['end']);
  });

  it('matches a present null against a rule value of null', async () => {
    const runtime = runtimeOf({
      stages: [
        { name: 'a', run: () => ({ v: null }), routingRules: [{ condition: 'v', value: null, target: 'b' }] },
        stage('b'),
      ],
    });
    expect((await runtime.run(null)).trace.map((t) => t.stage)).toEqual(['a', 'b']);
  });

  it('matches deep-equal objects in any key order, and 0 against -0', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => ({ plan: { steps: [{ id: 1, tags: ['x'] }], owner: 'me' }, n: -0 }),
          routingRules: [
            { condition: 'n', value: 1, target: 'end' },
            { condition: 'plan', value: { owner: 'me', steps: [{ tags: ['x'], id: 1 }] }, target: 'b' },
          ],
        },
        { name: 'b', run: () => ({ n: -0 }), routingRules: [{ condition: 'n', value: 0, target: 'c' }] },
        stage('c'),
      ],
    });
    expect((await runtime.run(null)).trace.map((t) => t.stage)).toEqual(['a', 'b', 'c']);
  });

  it('never matches NaN, not even against NaN', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => ({ v: Number.NaN }),
          routingRules: [{ condition: 'v', value: Number.NaN, target: 'b' }],
        },
        stage('b'),
      ],
    });
    expect((await runtime.run(null)).trace.map((t) => t.next)).toEqual(['end']);
  });

  it('records the routing decision in the trace with ISO timestamps', async () => {
    const env = await verdictPipeline('publish').run(null);
    for (const t of env.trace) {
      expect(new Date(t.startedAt).toISOString()).toBe(t.startedAt);
      expect(Date.parse(t.endedAt)).toBeGreaterThanOrEqual(Date.parse(t.startedAt));
    }
    expect(env.trace[0]!.next).toBe('publish');
  });
});

describe('PipelineRuntime.run: failures', () => {
  it('a thrown error goes to errorNext and is recorded with its code', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => {
            throw new SignalyardError({ code: 'BOOM', message: 'it broke' });
          },
          errorNext: 'recover',
          defaultNext: 'b',
        },
        stage('b'),
        stage('recover', { fixed: true }),
      ],
    });
    const env = await runtime.run(null);
    expect(env.terminalReason).toBe('completed');
    expect(env.trace.map((t) => [t.stage, t.next])).toEqual([
      ['a', 'recover'],
      ['recover', 'end'],
    ]);
    expect(env.errors).toEqual([{ stage: 'a', error: 'it broke', code: 'BOOM', at: env.trace[0]!.endedAt }]);
    expect(env.outputs).toEqual({ recover: { fixed: true } });
    expect(env.completedStages).toEqual(['recover']);
  });

  it('a failure without errorNext ends the run stage_failed at that stage', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: async () => {
            throw new Error('no network');
          },
          defaultNext: 'b',
        },
        stage('b'),
      ],
    });
    const env = await runtime.run(null);
    expect(env).toMatchObject({ terminated: true, terminalReason: 'stage_failed', currentStage: 'a' });
    expect(env.terminationReason).toContain('no network');
    expect(env.errors).toHaveLength(1);
    expect(env.errors[0]).not.toHaveProperty('code');
    expect(env.trace.map((t) => t.next)).toEqual(['end']);
  });

  it('a truthy error field fails the stage even when a rule would match; the output is still stored', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => ({ verdict: 'ok', error: { message: 'bad data', code: 'E_DATA' } }),
          routingRules: [{ condition: 'verdict', value: 'ok', target: 'b' }],
          errorNext: 'handler',
        },
        stage('b'),
        { name: 'handler', run: (ctx) => ({ saw: (ctx.outputs.a as { verdict: string }).verdict }) },
      ],
    });
    const env = await runtime.run(null);
    expect(env.trace.map((t) => t.stage)).toEqual(['a', 'handler']);
    expect(env.errors).toMatchObject([{ stage: 'a', error: 'bad data', code: 'E_DATA' }]);
    expect(env.outputs.handler).toEqual({ saw: 'ok' });
  });

  it.each([
    ['a string', 'quota hit', 'quota hit'],
    ['true', true, 'the stage output has error: true'],
    ['a number', 7, '7'],
    ['an Error', new Error('bad'), 'bad'],
  ])('a truthy error field that is %s is recorded as a failure', async (_what, error, message) => {
    const env = await runtimeOf({ stages: [{ name: 'a', run: () => ({ error }) }] }).run(null);
    expect(env.terminalReason).toBe('stage_failed');
    expect(env.errors[0]!.error).toBe(message);
  });

  it.each([false, 0, '', null, Number.NaN])('a falsy error field (%s) is not a failure', async (error) => {
    const env = await runtimeOf({ stages: [{ name: 'a', run: () => ({ error }) }] }).run(null);
    expect(env.terminalReason).toBe('completed');
    expect(env.errors).toEqual([]);
  });

  class Result {}
  it.each<[string, unknown]>([
    ['a number', 42],
    ['a string', 'done'],
    ['null', null],
    ['an array', [1]],
    ['a Map', new Map()],
    ['a class instance', new Result()],
  ])('an output that is %s fails the stage with PIPELINE_STAGE_OUTPUT_INVALID', async (_what, value) => {
    const runtime = runtimeOf({
      stages: [{ name: 'a', run: () => value as Record<string, unknown>, defaultNext: 'b' }, stage('b')],
    });
    const env = await runtime.run(null);
    expect(env.terminalReason).toBe('stage_failed');
    expect(env.errors[0]).toMatchObject({ stage: 'a', code: 'PIPELINE_STAGE_OUTPUT_INVALID' });
    expect(env.errors[0]!.error).toContain('"a"');
    expect(env.outputs).toEqual({});
  });

  it('an output whose getter throws fails the stage with PIPELINE_STAGE_OUTPUT_INVALID', async () => {
    const out = {
      get boom(): unknown {
        throw new Error('getter exploded');
      },
    };
    const env = await runtimeOf({ stages: [{ name: 'a', run: () => out }] }).run(null);
    expect(env.errors[0]).toMatchObject({ code: 'PIPELINE_STAGE_OUTPUT_INVALID' });
    expect(env.errors[0]!.error).toContain('getter exploded');
  });

  it('a nested getter that throws fails the stage when its output is copied (PIPELINE_STAGE_OUTPUT_INVALID), going to errorNext', async () => {
    // Outputs are deep, frozen copies: the getter is read when the output is taken, before any
    // rule compares it.
    const nested = {
      get deep(): unknown {
        throw new Error('nested getter');
      },
    };
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => ({ v: nested }),
          routingRules: [{ condition: 'v', value: { deep: 1 }, target: 'end' }],
          errorNext: 'b',
        },
        stage('b'),
      ],
    });
    const env = await runtime.run(null);
    expect(env.errors[0]).toMatchObject({ stage: 'a', code: 'PIPELINE_STAGE_OUTPUT_INVALID' });
    expect(env.errors[0]!.error).toContain('nested getter');
    expect(env.trace.map((t) => t.stage)).toEqual(['a', 'b']);
  });

  it('a value that throws while a rule compares it fails the stage with PIPELINE_ROUTING_FAILED', async () => {
    // A class instance is kept as it is (not copied); this one's prototype can be read once only.
    let reads = 0;
    const value = new Proxy(new Date(0), {
      getPrototypeOf() {
        if (++reads > 1) throw new Error('prototype exploded');
        return Date.prototype;
      },
    });
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => ({ v: value }),
          routingRules: [{ condition: 'v', value: { deep: 1 }, target: 'end' }],
          errorNext: 'b',
        },
        stage('b'),
      ],
    });
    const env = await runtime.run(null);
    expect(env.errors[0]).toMatchObject({ stage: 'a', code: 'PIPELINE_ROUTING_FAILED' });
    expect(env.errors[0]!.error).toContain('prototype exploded');
    expect(env.trace.map((t) => t.stage)).toEqual(['a', 'b']);
  });

  it('records thrown non-errors readably', async () => {
    const env = await runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => {
            throw { message: 'plain object' };
          },
          errorNext: 'b',
        },
        {
          name: 'b',
          run: () => {
            throw 'a string';
          },
          errorNext: 'c',
        },
        {
          name: 'c',
          run: () => {
            throw 42;
          },
        },
      ],
    }).run(null);
    expect(env.errors.map((e) => e.error)).toEqual(['plain object', 'a string', '42']);
  });

  it('records a thrown value whose message getter throws without crashing', async () => {
    const weird = {
      get message(): string {
        throw new Error('no message for you');
      },
    };
    const env = await runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => {
            throw weird;
          },
        },
      ],
    }).run(null);
    expect(env.terminalReason).toBe('stage_failed');
    expect(typeof env.errors[0]!.error).toBe('string');
  });

  it('every failure is recorded, with or without errorNext', async () => {
    let calls = 0;
    const runtime = runtimeOf({
      maxIterations: 10,
      stages: [
        {
          name: 'a',
          run: () => {
            calls++;
            if (calls < 3) throw new Error(`try ${calls}`);
            return {};
          },
          errorNext: 'a',
        },
      ],
    });
    const env = await runtime.run(null);
    expect(env.terminalReason).toBe('completed');
    expect(env.errors.map((e) => e.error)).toEqual(['try 1', 'try 2']);
  });
});

describe('PipelineRuntime.stream', () => {
  it('yields stage_start / stage_end per stage and ends with end carrying the envelope', async () => {
    const runtime = runtimeOf({ stages: [stage('a', { x: 1 }, { defaultNext: 'b' }), stage('b', { y: 1 })] });
    const events = await collect(runtime.stream('in'));
    expect(types(events)).toEqual(['stage_start:a', 'stage_end:a', 'stage_start:b', 'stage_end:b', 'end']);
    expect(events[1]).toEqual({ type: 'stage_end', stage: 'a', output: { x: 1 }, failed: false, next: 'b' });
    const end = events.at(-1);
    expect(end?.type === 'end' && end.envelope.terminalReason).toBe('completed');
  });

  it('reports failed stages with failed: true', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => {
            throw new Error('x');
          },
        },
      ],
    });
    const events = await collect(runtime.stream(null));
    expect(events[1]).toEqual({ type: 'stage_end', stage: 'a', output: {}, failed: true, next: 'end' });
    expect(events.at(-1)?.type).toBe('end');
  });

  it('does not start the run until iterated', async () => {
    let ran = 0;
    const runtime = runtimeOf({ stages: [{ name: 'a', run: () => (ran++, {}) }] });
    const stream = runtime.stream(null);
    await Promise.resolve();
    expect(ran).toBe(0);
    await collect(stream);
    expect(ran).toBe(1);
  });

  it('cancels the run when the consumer stops early', async () => {
    const aborted = deferred<unknown>();
    const runtime = runtimeOf({
      stages: [
        stage('a', {}, { defaultNext: 'b' }),
        {
          name: 'b',
          run: (ctx) =>
            new Promise<Record<string, unknown>>((resolve) => {
              ctx.abortSignal.addEventListener('abort', () => {
                aborted.resolve(ctx.abortSignal.reason);
                resolve({});
              });
            }),
        },
      ],
    });
    for await (const event of runtime.stream(null)) {
      if (event.type === 'stage_start' && event.stage === 'b') break;
    }
    expect(await aborted.promise).toMatchObject({ code: 'ABORTED' });
  });

  it('rejects the first next() for bad options', async () => {
    const runtime = runtimeOf({ stages: [stage('a')] });
    await rejectsCode(collect(runtime.stream(null, { mode: 'dag' as never })), 'PIPELINE_ARGUMENT_INVALID');
    await rejectsCode(collect(runtime.stream(null, { envelopeId: '' })), 'PIPELINE_ARGUMENT_INVALID');
  });
});

describe('PipelineRuntime: models', () => {
  it('counts every ctx.model.generate call and passes the stage signal and name', async () => {
    const model = echoModel('hello');
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'writer',
            run: async (ctx) => {
              const a = await ctx.model!.generate({ messages: [{ role: 'user', content: 'hi' }] });
              const b = await ctx.model!.generate({ messages: [], agentId: 'custom' });
              return { text: a.content + b.content };
            },
          },
        ],
      },
      model,
    );
    const env = await runtime.run(null);
    expect(env.llmCalls).toBe(2);
    expect(env.outputs.writer).toEqual({ text: 'hellohello' });
    expect(model.calls[0]!.agentId).toBe('writer');
    expect(model.calls[0]!.abortSignal).toBeInstanceOf(AbortSignal);
    expect(model.calls[1]!.agentId).toBe('custom');
    expect(runtime.model).toBe(model);
  });

  it('counts a model call that rejects', async () => {
    const model: ChatModel = {
      generate: async () => {
        throw new Error('provider down');
      },
    };
    const runtime = runtimeOf(
      {
        stages: [{ name: 'a', run: async (ctx) => ({ text: (await ctx.model!.generate({ messages: [] })).content }) }],
      },
      model,
    );
    const env = await runtime.run(null);
    expect(env.llmCalls).toBe(1);
    expect(env.errors[0]!.error).toBe('provider down');
  });
});

describe('PipelineRuntime: tool calls', () => {
  it('ctx.countToolCall counts without a quota and never refuses', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'search',
          run: (ctx) => {
            ctx.countToolCall();
            ctx.countToolCall(5);
            ctx.countToolCall(0);
            return { ok: true };
          },
        },
      ],
    });
    const env = await runtime.run(null);
    expect(env.terminalReason).toBe('completed');
  });

  it.each([-1, 1.5, Number.NaN, '2'])(
    'ctx.countToolCall(%s) throws PIPELINE_ARGUMENT_INVALID inside the stage',
    async (n) => {
      let error: unknown;
      const runtime = runtimeOf({
        stages: [
          {
            name: 'search',
            run: (ctx) => {
              try {
                ctx.countToolCall(n as number);
              } catch (e) {
                error = e;
              }
              return {};
            },
          },
        ],
      });
      await runtime.run(null);
      expect(PipelineUsageError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'PIPELINE_ARGUMENT_INVALID', argument: 'n' });
    },
  );
});

describe('PipelineRuntime: bad input', () => {
  it('rejects a constructor argument that is not a Pipeline', () => {
    const e = throwsCode(() => new PipelineRuntime({ name: 'x', stages: [] } as never), 'PIPELINE_ARGUMENT_INVALID');
    expect(PipelineUsageError.isInstance(e)).toBe(true);
    expect(e.message).toContain('definePipeline');
  });

  it('rejects a malformed model or options', () => {
    const p = definePipeline({ name: 'p', stages: [stage('a')] });
    throwsCode(() => new PipelineRuntime(p, { model: {} as ChatModel }), 'PIPELINE_ARGUMENT_INVALID');
    throwsCode(() => new PipelineRuntime(p, null as never), 'PIPELINE_ARGUMENT_INVALID');
  });

  it("runs run(input, { mode: 'parallel' }) as a DAG (see dag.test.ts), not sequentially", async () => {
    const runtime = runtimeOf({
      stages: [stage('a', {}, { defaultNext: 'b' }), stage('b', {}, { requires: ['a'] }), stage('c')],
    });
    const env = await runtime.run(null, { mode: 'parallel' });
    expect(env).toMatchObject({ mode: 'parallel', terminalReason: 'completed', completedStages: ['a', 'c', 'b'] });
  });

  it.each([
    ['an unknown mode', { mode: 'dag' }],
    ['an empty envelopeId', { envelopeId: '' }],
    ['a non-signal abortSignal', { abortSignal: {} }],
    ['a zero timeoutMs', { timeoutMs: 0 }],
    ['a huge timeoutMs', { timeoutMs: 2 ** 31 }],
    ['non-object bounds', { bounds: 3 }],
    ['an unknown bound', { bounds: { maxHops: 3 } }],
    ['a zero bound', { bounds: { maxAgentHops: 0 } }],
    ['an unknown option', { signal: new AbortController().signal }],
    ['options that are not an object', 'fast'],
  ])('rejects %s with PIPELINE_ARGUMENT_INVALID', async (_what, opts) => {
    const runtime = runtimeOf({ stages: [stage('a')] });
    const e = await rejectsCode(runtime.run(null, opts as never), 'PIPELINE_ARGUMENT_INVALID');
    expect(e).toMatchObject({ argument: expect.stringMatching(/^opts/) as unknown });
  });

  it('uses the given envelopeId', async () => {
    const env = await runtimeOf({ stages: [stage('a')] }).run(null, { envelopeId: 'job-42' });
    expect(env.id).toBe('job-42');
  });
});

describe('public types', () => {
  it('type the runtime, stage context, events and terminal reasons', () => {
    expectTypeOf<PipelineRuntime['run']>().returns.toEqualTypeOf<Promise<Envelope>>();
    expectTypeOf<PipelineRuntime['stream']>().returns.toEqualTypeOf<AsyncIterable<PipelineEvent>>();
    expectTypeOf<PipelineRuntime['resume']>().returns.toEqualTypeOf<Promise<Envelope>>();
    expectTypeOf<StageContext['interrupt']>().returns.toBeNever();
    expectTypeOf<StageContext['model']>().toEqualTypeOf<Required<ChatModel> | undefined>();
    expectTypeOf<Extract<PipelineEvent, { type: 'end' }>['envelope']>().toEqualTypeOf<Envelope>();
    expectTypeOf<Extract<PipelineEvent, { type: 'stage_end' }>['output']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<'completed'>().toExtend<TerminalReason>();
    expectTypeOf<'done'>().not.toExtend<TerminalReason>();
    expectTypeOf<Envelope['terminalReason']>().toEqualTypeOf<TerminalReason | undefined>();
    // stages may return nothing, synchronously or not
    definePipeline({
      name: 'types',
      stages: [
        { name: 'a', run: () => undefined },
        { name: 'b', run: async () => {} },
        { name: 'c', run: () => ({ k: 1 }) },
      ],
    });
  });
});
