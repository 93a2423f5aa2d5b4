import { describe, expect, it } from 'vitest';
import { AbortedError } from '@signalyard/core';
import type { ChatModel, ChatRequest, ChatStreamPart } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import {
  PipelineBoundError,
  PipelineRuntime,
  definePipeline,
  type PipelineEvent,
  type StageConfig,
  type StageContext,
} from '@signalyard/pipeline';
import { rejection } from '@signalyard/test-utils';
import { collect, deferred, echoModel, runtimeOf, throwsCode } from './support.js';

const ask = (content = 'hi'): ChatRequest => ({ messages: [{ role: 'user', content }] });

/** A stage that streams one reply from `ctx.model` and returns its text. */
const streamingStage = (name: string, rest: Partial<StageConfig> = {}): StageConfig => ({
  name,
  run: async (ctx) => {
    let text = '';
    for await (const part of ctx.model!.stream(ask())) if (part.type === 'text-delta') text += part.delta;
    return { text };
  },
  ...rest,
});

/** The events as compact strings: `stage_delta:<stage>:<delta>`, `stage_start:<stage>`, … */
const trail = (events: readonly PipelineEvent[]): string[] =>
  events.map((e) =>
    e.type === 'stage_delta' ? `delta:${e.stage}:${e.delta}` : 'stage' in e ? `${e.type}:${e.stage}` : e.type,
  );

describe('stages that stream: stage_delta events', () => {
  it('forwards each text delta the stage reads, in order, between its stage_start and stage_end', async () => {
    const model = scriptedModel(['Hello there'], { streamChunkChars: 4 });
    const runtime = runtimeOf(
      { stages: [streamingStage('draft', { defaultNext: 'review' }), { name: 'review', run: () => ({}) }] },
      model,
    );
    const events = await collect(runtime.stream(null));
    expect(trail(events)).toEqual([
      'stage_start:draft',
      'delta:draft:Hell',
      'delta:draft:o th',
      'delta:draft:ere',
      'stage_model_response:draft',
      'stage_end:draft',
      'stage_start:review',
      'stage_end:review',
      'end',
    ]);
    const end = events.at(-1);
    expect(end?.type === 'end' && end.envelope.outputs.draft).toEqual({ text: 'Hello there' });
  });

  it('falls back to generate for a model without stream: the whole reply as one delta', async () => {
    const model = echoModel('whole reply');
    const events = await collect(runtimeOf({ stages: [streamingStage('draft')] }, model).stream(null));
    expect(trail(events)).toEqual([
      'stage_start:draft',
      'delta:draft:whole reply',
      'stage_model_response:draft',
      'stage_end:draft',
      'end',
    ]);
  });

  it('passes tool calls and finish through to the stage without events', async () => {
    const call = { id: 'c1', name: 'lookup', arguments: { q: 'x' } };
    const model = scriptedModel([{ content: 'ok', toolCalls: [call] }]);
    let seen: ChatStreamPart[] = [];
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'tools',
            run: async (ctx) => {
              seen = await collect(ctx.model!.stream(ask()));
              return {};
            },
          },
        ],
      },
      model,
    );
    const events = await collect(runtime.stream(null));
    expect(seen.map((p) => p.type)).toEqual(['text-delta', 'tool-call', 'finish']);
    expect(events.filter((e) => e.type === 'stage_delta')).toEqual([
      { type: 'stage_delta', stage: 'tools', delta: 'ok' },
    ]);
  });

  it('streams in run() too, where nobody listens: the stage gets its parts, no events are made', async () => {
    const model = scriptedModel(['abc'], { streamChunkChars: 1 });
    const env = await runtimeOf({ stages: [streamingStage('draft')] }, model).run(null);
    expect(env.outputs.draft).toEqual({ text: 'abc' });
    expect(env.llmCalls).toBe(1);
  });

  it('gives stream requests the stage’s abort signal and name, unless the request has its own', async () => {
    const model = scriptedModel(['a', 'b']);
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'writer',
            run: async (ctx) => {
              await collect(ctx.model!.stream(ask()));
              await collect(ctx.model!.stream({ ...ask(), agentId: 'custom' }));
              return {};
            },
          },
        ],
      },
      model,
    );
    await runtime.run(null);
    expect(model.calls.map((c) => c.agentId)).toEqual(['writer', 'custom']);
    expect(model.calls[0]?.abortSignal).toBeInstanceOf(AbortSignal);
  });

  it('reports no delta read after the stage ended', async () => {
    const model = scriptedModel(['late text']);
    let leaked: AsyncIterable<ChatStreamPart> | undefined;
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'leaky',
            run: (ctx) => {
              leaked = ctx.model!.stream(ask());
              return {};
            },
          },
        ],
      },
      model,
    );
    const events: PipelineEvent[] = [];
    for await (const event of runtime.stream(null)) {
      events.push(event);
      if (event.type === 'stage_end') await collect(leaked!);
    }
    expect(trail(events)).toEqual(['stage_start:leaky', 'stage_end:leaky', 'end']);
  });

  it('in DAG mode, tags each delta with its stage, every one before that stage’s stage_end', async () => {
    const model = scriptedModel({ a: ['aaaa'], b: ['bbbb'] }, { streamChunkChars: 1 });
    const byAgent = (name: string): StageConfig => ({
      name,
      run: async (ctx) => {
        let text = '';
        for await (const part of ctx.model!.stream({ ...ask(), agentId: name }))
          if (part.type === 'text-delta') text += part.delta;
        return { text };
      },
    });
    const events = await collect(
      runtimeOf({ stages: [byAgent('a'), byAgent('b')] }, model).stream(null, { mode: 'parallel' }),
    );
    for (const name of ['a', 'b']) {
      const mine = trail(events).filter((t) => t.endsWith(`:${name}`) || t.startsWith(`delta:${name}:`));
      expect(mine).toEqual([
        `stage_start:${name}`,
        ...Array<string>(4).fill(`delta:${name}:${name}`),
        `stage_model_response:${name}`,
        `stage_end:${name}`,
      ]);
    }
  });
});

describe('stage_model_response events', () => {
  it("reports each answered call of a stage, generate and stream, with the request's agentId and the whole response", async () => {
    const call = { id: 'c1', name: 'lookup', arguments: { q: 'x' } };
    const model = scriptedModel({ draft: ['first', { content: 'second', toolCalls: [call] }], critic: ['third'] });
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'draft',
            run: async (ctx) => {
              await ctx.model!.generate(ask());
              await collect(ctx.model!.stream(ask()));
              await ctx.model!.generate({ ...ask(), agentId: 'critic' });
              return {};
            },
          },
        ],
      },
      model,
    );
    const events = await collect(runtime.stream(null));
    const answered = events.filter((e) => e.type === 'stage_model_response');
    expect(answered.map((e) => [e.stage, e.agentId, e.response.content, e.response.toolCalls?.length ?? 0])).toEqual([
      ['draft', 'draft', 'first', 0],
      ['draft', 'draft', 'second', 1],
      ['draft', 'critic', 'third', 0],
    ]);
  });

  it('reports nothing for a call that failed', async () => {
    const failing: ChatModel = { generate: () => Promise.reject(new Error('down')) };
    const stage: StageConfig = {
      name: 's',
      run: async (ctx) => {
        await ctx.model!.generate(ask()).catch(() => undefined);
        return {};
      },
    };
    const events = await collect(runtimeOf({ stages: [stage] }, failing).stream(null));
    expect(events.some((e) => e.type === 'stage_model_response')).toBe(false);
  });
});

describe('stages that stream: the model-call bound', () => {
  it('counts one model call per stream, however many deltas it has', async () => {
    const model = scriptedModel(['x'.repeat(100), 'y'], { streamChunkChars: 1 });
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'a',
            run: async (ctx) => {
              await collect(ctx.model!.stream(ask()));
              await ctx.model!.generate(ask());
              return {};
            },
          },
        ],
      },
      model,
    );
    const env = await runtime.run(null);
    expect(env.llmCalls).toBe(2);
    expect(env.terminalReason).toBe('completed');
  });

  it('beyond the bound, stream() returns a stream whose first next() rejects with the bound error, and the run ends max_llm_calls_exceeded', async () => {
    const model = scriptedModel(['one', 'two']);
    let refused: unknown;
    let afterRefusal: IteratorResult<ChatStreamPart> | undefined;
    const runtime = runtimeOf(
      {
        maxLlmCalls: 1,
        stages: [
          {
            name: 'a',
            run: async (ctx) => {
              await collect(ctx.model!.stream(ask()));
              const over = ctx.model!.stream(ask())[Symbol.asyncIterator]();
              refused = await rejection(over.next());
              afterRefusal = await over.next();
              return { caught: true };
            },
          },
        ],
      },
      model,
    );
    const env = await runtime.run(null);
    expect(PipelineBoundError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ code: 'PIPELINE_BOUND_EXCEEDED', bound: 'maxLlmCalls', limit: 1 });
    expect(afterRefusal).toEqual({ done: true, value: undefined });
    expect(model.calls).toHaveLength(1);
    expect(env.llmCalls).toBe(1);
    expect(env.terminated).toBe(true);
    expect(env.terminalReason).toBe('max_llm_calls_exceeded');
  });

  it('rejects a request that is not an object at the first next(), without counting it', async () => {
    const model = scriptedModel(['x']);
    let error: unknown;
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'a',
            run: async (ctx) => {
              error = await rejection(collect(ctx.model!.stream('hi' as unknown as ChatRequest)));
              return {};
            },
          },
        ],
      },
      model,
    );
    const env = await runtime.run(null);
    expect(error).toMatchObject({ code: 'PIPELINE_ARGUMENT_INVALID', argument: 'request' });
    expect(env.llmCalls).toBe(0);
    expect(model.calls).toHaveLength(0);
  });

  it('rejects a request streamChat cannot read at the first next() (counted, like a generate call the model rejects)', async () => {
    let error: unknown;
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'a',
            run: async (ctx) => {
              error = await rejection(collect(ctx.model!.stream({ messages: 'hi' } as unknown as ChatRequest)));
              return {};
            },
          },
        ],
      },
      scriptedModel(['x']),
    );
    const env = await runtime.run(null);
    expect(error).toMatchObject({ code: 'CHAT_REQUEST_INVALID' });
    expect(env.llmCalls).toBe(1);
  });
});

describe('stages that stream: failures and cancellation', () => {
  it('a model stream that breaks the rules fails the stage with MODEL_STREAM_INVALID', async () => {
    const broken: ChatModel = {
      generate: async () => ({ content: '' }),
      async *stream() {
        yield { type: 'text-delta', delta: 'partial' };
      },
    };
    const events = await collect(runtimeOf({ stages: [streamingStage('draft')] }, broken).stream(null));
    expect(trail(events)).toEqual(['stage_start:draft', 'delta:draft:partial', 'stage_end:draft', 'end']);
    const end = events.at(-1);
    if (end?.type !== 'end') return expect.unreachable('expected an end event');
    expect(end.envelope.terminalReason).toBe('stage_failed');
    expect(end.envelope.errors[0]?.code).toBe('MODEL_STREAM_INVALID');
  });

  it('cancelling the run stops a stage reading a model that never answers', async () => {
    const started = deferred();
    const hanging: ChatModel = {
      generate: async () => ({ content: '' }),
      stream: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => {
            started.resolve();
            return new Promise<IteratorResult<ChatStreamPart>>(() => undefined);
          },
        }),
      }),
    };
    let stageError: unknown;
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'draft',
            run: async (ctx: StageContext) => {
              try {
                await collect(ctx.model!.stream(ask()));
              } catch (error) {
                stageError = error;
                throw error;
              }
              return {};
            },
          },
        ],
      },
      hanging,
    );
    const controller = new AbortController();
    const run = runtime.run(null, { abortSignal: controller.signal });
    await started.promise;
    controller.abort();
    const env = await run;
    expect(env.terminated).toBe(true);
    expect(env.errors[0]?.code).toBe('ABORTED');
    expect(AbortedError.isInstance(stageError)).toBe(true);
  });

  it('refuses a model whose stream is not a function when the runtime is made', () => {
    const p = definePipeline({ name: 'p', stages: [{ name: 'a', run: () => ({}) }] });
    const model = { generate: async () => ({ content: '' }), stream: 'yes' } as unknown as ChatModel;
    const error = throwsCode(() => new PipelineRuntime(p, { model }), 'PIPELINE_ARGUMENT_INVALID');
    expect(error.message).toContain('stream');
  });
});
