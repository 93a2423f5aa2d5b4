import { describe, expect, it } from 'vitest';
import { PipelineBoundError, type StageConfig } from '@signalyard/pipeline';
import { collect, echoModel, runtimeOf, stage, types } from './support.js';

/** The source design's cyclic graph: stage_a -> stage_b -> stage_c, stage_c routes by verdict. */
function cyclic(verdict: () => string): StageConfig[] {
  return [
    stage('stage_a', { a: true }, { defaultNext: 'stage_b' }),
    stage('stage_b', { b: true }, { defaultNext: 'stage_c' }),
    {
      name: 'stage_c',
      run: () => ({ verdict: verdict() }),
      routingRules: [
        { condition: 'verdict', value: 'proceed', target: 'end' },
        { condition: 'verdict', value: 'loop_back', target: 'stage_a' },
      ],
      defaultNext: 'end',
    },
  ];
}

const runsOf = (trace: readonly { stage: string }[], name: string): number =>
  trace.filter((t) => t.stage === name).length;

describe('edge limits', () => {
  it('the cyclic stage_c -> stage_a graph with an edge limit of 2 runs stage_a 3 times and ends max_loop_exceeded', async () => {
    const runtime = runtimeOf({
      stages: cyclic(() => 'loop_back'),
      maxIterations: 100,
      edgeLimits: [{ from: 'stage_c', to: 'stage_a', maxCount: 2 }],
    });
    const env = await runtime.run(null);
    expect(runsOf(env.trace, 'stage_a')).toBe(3);
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'max_loop_exceeded',
      terminationReason: 'edge limit exceeded: stage_c->stage_a',
      iteration: 2,
      agentHops: 9,
    });
    // the refused third traversal is not counted
    expect(env.edgeTraversals['stage_c->stage_a']).toBe(2);
  });

  it('the same graph completes when stage_c proceeds', async () => {
    let n = 0;
    const runtime = runtimeOf({
      stages: cyclic(() => (++n < 2 ? 'loop_back' : 'proceed')),
      edgeLimits: [{ from: 'stage_c', to: 'stage_a', maxCount: 2 }],
    });
    const env = await runtime.run(null);
    expect(env.terminalReason).toBe('completed');
    expect(runsOf(env.trace, 'stage_a')).toBe(2);
  });

  it('allows exactly N traversals; self-loops count', async () => {
    for (const maxCount of [1, 2, 5]) {
      const runtime = runtimeOf({
        maxAgentHops: 100,
        stages: [stage('a', {}, { defaultNext: 'a' })],
        edgeLimits: [{ from: 'a', to: 'a', maxCount }],
      });
      const env = await runtime.run(null);
      expect(env.edgeTraversals['a->a']).toBe(maxCount);
      expect(env.agentHops).toBe(maxCount + 1);
      expect(env.terminalReason).toBe('max_loop_exceeded');
      expect(env.terminationReason).toBe('edge limit exceeded: a->a');
    }
  });

  it('limits only its own edge', async () => {
    let n = 0;
    const runtime = runtimeOf({
      maxIterations: 10,
      stages: [
        stage('a', {}, { defaultNext: 'b' }),
        {
          name: 'b',
          run: () => ({ go: ++n % 2 === 0 ? 'a' : 'b' }),
          routingRules: [
            { condition: 'go', value: 'a', target: 'a' },
            { condition: 'go', value: 'b', target: 'b' },
          ],
        },
      ],
      edgeLimits: [{ from: 'b', to: 'a', maxCount: 1 }],
    });
    const env = await runtime.run(null);
    expect(env.edgeTraversals).toMatchObject({ 'b->a': 1 });
    expect(env.terminationReason).toBe('edge limit exceeded: b->a');
  });

  it('regression: edge limits are enforced (the source system declared them but never checked them)', async () => {
    const runtime = runtimeOf({
      maxIterations: 1000,
      maxAgentHops: 1000,
      stages: cyclic(() => 'loop_back'),
      edgeLimits: [{ from: 'stage_c', to: 'stage_a', maxCount: 3 }],
    });
    const env = await runtime.run(null);
    expect(env.terminated).toBe(true);
    expect(env.terminalReason).toBe('max_loop_exceeded');
    expect(env.edgeTraversals['stage_c->stage_a']).toBe(3);
  });
});

describe('iterations', () => {
  it('counts a transition to an earlier stage as an iteration, and no other transition', async () => {
    let n = 0;
    const env = await runtimeOf({ stages: cyclic(() => (++n <= 2 ? 'loop_back' : 'proceed')) }).run(null);
    expect(env.iteration).toBe(2);
    expect(env.terminalReason).toBe('completed');
  });

  it('regression: loop-backs are counted and maxIterations fires (the source counter never moved)', async () => {
    const env = await runtimeOf({ stages: cyclic(() => 'loop_back'), maxIterations: 3, maxAgentHops: 1000 }).run(null);
    expect(env.iteration).toBe(3);
    expect(runsOf(env.trace, 'stage_a')).toBe(4);
    expect(env).toMatchObject({ terminated: true, terminalReason: 'max_iterations_exceeded', currentStage: 'stage_a' });
    expect(env.terminationReason).toContain('max iterations exceeded: 3');
  });

  it('uses the default of 3 iterations', async () => {
    const env = await runtimeOf({ stages: cyclic(() => 'loop_back') }).run(null);
    expect(env.iteration).toBe(3);
    expect(env.terminalReason).toBe('max_iterations_exceeded');
  });

  it('does not count a self-loop as an iteration', async () => {
    const env = await runtimeOf({
      stages: [stage('a', {}, { defaultNext: 'a' })],
      maxIterations: 1,
      maxAgentHops: 4,
    }).run(null);
    expect(env.iteration).toBe(0);
    expect(env.terminalReason).toBe('max_agent_hops_exceeded');
  });

  it('a run-level bound tightens the pipeline bound but never loosens it', async () => {
    const runtime = runtimeOf({ stages: cyclic(() => 'loop_back'), maxIterations: 3, maxAgentHops: 1000 });
    expect((await runtime.run(null, { bounds: { maxIterations: 1 } })).iteration).toBe(1);
    expect((await runtime.run(null, { bounds: { maxIterations: 50 } })).iteration).toBe(3);
  });
});

describe('agent hops', () => {
  it('a stage looping on itself with maxAgentHops: 5 runs exactly 5 times', async () => {
    let runs = 0;
    const runtime = runtimeOf({ maxAgentHops: 5, stages: [{ name: 'a', run: () => (runs++, {}), defaultNext: 'a' }] });
    const env = await runtime.run(null);
    expect(runs).toBe(5);
    expect(env).toMatchObject({ agentHops: 5, terminated: true, terminalReason: 'max_agent_hops_exceeded' });
    expect(env.edgeTraversals['a->a']).toBe(4);
    expect(env.terminationReason).toContain('max agent hops exceeded: 5');
  });

  it('uses the default of 21 hops', async () => {
    const env = await runtimeOf({ stages: [stage('a', {}, { defaultNext: 'a' })] }).run(null);
    expect(env.agentHops).toBe(21);
    expect(env.terminalReason).toBe('max_agent_hops_exceeded');
  });

  it('a run-level maxAgentHops tightens the pipeline bound', async () => {
    const env = await runtimeOf({ stages: [stage('a', {}, { defaultNext: 'a' })] }).run(null, {
      bounds: { maxAgentHops: 2 },
    });
    expect(env.agentHops).toBe(2);
  });

  it('a pipeline of exactly maxAgentHops stages completes', async () => {
    const env = await runtimeOf({ maxAgentHops: 2, stages: [stage('a', {}, { defaultNext: 'b' }), stage('b')] }).run(
      null,
    );
    expect(env.terminalReason).toBe('completed');
  });
});

describe('model calls', () => {
  const caller = (calls: number, catchRefusal: boolean): StageConfig => ({
    name: 'writer',
    run: async (ctx) => {
      const texts: string[] = [];
      for (let i = 0; i < calls; i++) {
        try {
          texts.push((await ctx.model!.generate({ messages: [] })).content);
        } catch (error) {
          if (!catchRefusal) throw error;
          texts.push(PipelineBoundError.isInstance(error) ? 'refused' : 'other');
        }
      }
      return { texts };
    },
    defaultNext: 'next',
  });

  it('a model call over maxLlmCalls caught by the stage still ends the run max_llm_calls_exceeded', async () => {
    const runtime = runtimeOf({ maxLlmCalls: 2, stages: [caller(3, true), stage('next')] }, echoModel());
    const env = await runtime.run(null);
    expect(env.outputs.writer).toEqual({ texts: ['ok', 'ok', 'refused'] });
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'max_llm_calls_exceeded',
      llmCalls: 2,
      currentStage: 'writer',
    });
    expect(env.trace.map((t) => t.stage)).toEqual(['writer']);
  });

  it('an uncaught refusal is recorded as the stage failure, and the run still ends max_llm_calls_exceeded', async () => {
    const runtime = runtimeOf(
      { maxLlmCalls: 1, stages: [{ ...caller(2, false), errorNext: 'next' }, stage('next')] },
      echoModel(),
    );
    const env = await runtime.run(null);
    expect(env.terminalReason).toBe('max_llm_calls_exceeded');
    expect(env.errors).toMatchObject([{ stage: 'writer', code: 'PIPELINE_BOUND_EXCEEDED' }]);
    expect(env.errors[0]!.error).toContain('maxLlmCalls 1');
  });

  it('the refusal names the bound, limit and stage', async () => {
    let refusal: unknown;
    const runtime = runtimeOf(
      {
        maxLlmCalls: 1,
        stages: [
          {
            name: 'w',
            run: async (ctx) => {
              await ctx.model!.generate({ messages: [] });
              await ctx.model!.generate({ messages: [] }).catch((error: unknown) => (refusal = error));
              return {};
            },
          },
        ],
      },
      echoModel(),
    );
    await runtime.run(null);
    expect(PipelineBoundError.isInstance(refusal)).toBe(true);
    expect(refusal).toMatchObject({ code: 'PIPELINE_BOUND_EXCEEDED', bound: 'maxLlmCalls', limit: 1, stage: 'w' });
  });

  it('calls up to the bound are fine', async () => {
    const env = await runtimeOf({ maxLlmCalls: 3, stages: [caller(3, false), stage('next')] }, echoModel()).run(null);
    expect(env).toMatchObject({ terminalReason: 'completed', llmCalls: 3 });
  });

  it('counts calls across stages and a run-level maxLlmCalls tightens the bound', async () => {
    const runtime = runtimeOf(
      {
        maxLlmCalls: 10,
        stages: [
          { ...caller(2, true), defaultNext: 'second' },
          { ...caller(2, true), name: 'second', defaultNext: 'end' },
        ],
      },
      echoModel(),
    );
    expect((await runtime.run(null)).llmCalls).toBe(4);
    const tight = await runtime.run(null, { bounds: { maxLlmCalls: 3 } });
    expect(tight).toMatchObject({ llmCalls: 3, terminalReason: 'max_llm_calls_exceeded', currentStage: 'second' });
  });
});

describe('bound precedence', () => {
  it('two bounds firing on one step: the edge limit names the reason before iterations and hops', async () => {
    const env = await runtimeOf({
      maxIterations: 2,
      maxAgentHops: 6,
      stages: cyclic(() => 'loop_back'),
      edgeLimits: [{ from: 'stage_c', to: 'stage_a', maxCount: 1 }],
    }).run(null);
    // the second stage_c -> stage_a exceeds the edge limit (2 > 1) and the hop bound (7 > 6)
    expect(env.agentHops).toBe(6);
    expect(env.terminalReason).toBe('max_loop_exceeded');
  });

  it('two bounds firing on one step: iterations name the reason before hops', async () => {
    const env = await runtimeOf({
      maxIterations: 1,
      maxAgentHops: 4,
      stages: [stage('a', {}, { defaultNext: 'b' }), stage('b', {}, { defaultNext: 'a' })],
    }).run(null);
    // a, b, (b->a: iteration 1), a, b, then b->a would be iteration 2 > 1 and hop 5 > 4
    expect(env).toMatchObject({ agentHops: 4, iteration: 1, terminalReason: 'max_iterations_exceeded' });
  });

  it('a refused transition names the reason before a refused model call in the same step', async () => {
    const runtime = runtimeOf(
      {
        maxLlmCalls: 1,
        maxAgentHops: 100,
        stages: [
          {
            name: 'a',
            run: async (ctx) => {
              await ctx.model!.generate({ messages: [] }).catch(() => undefined);
              return {};
            },
            defaultNext: 'a',
          },
        ],
        edgeLimits: [{ from: 'a', to: 'a', maxCount: 1 }],
      },
      echoModel(),
    );
    const env = await runtime.run(null);
    // first run: one call, a->a allowed; second run: the call is refused and a->a is over its limit
    expect(env.llmCalls).toBe(1);
    expect(env.terminalReason).toBe('max_loop_exceeded');
  });

  it('a refused model call outranks reaching end, a failure and an interrupt', async () => {
    for (const result of ['end', 'fail', 'interrupt'] as const) {
      const refused = await runtimeOf({ maxLlmCalls: 1, stages: [overBudgetTwice(result)] }, echoModel()).run(null);
      expect(refused.llmCalls, result).toBe(1);
      expect(refused.terminalReason, result).toBe('max_llm_calls_exceeded');
      expect(refused.interrupt, result).toBeUndefined();
    }
  });

  it('regression: a bound that stops the run marks it terminated with its reason (the source left terminated false)', async () => {
    const cases: [string, Promise<{ terminated: boolean; terminalReason?: string }>][] = [
      ['hops', runtimeOf({ maxAgentHops: 2, stages: [stage('a', {}, { defaultNext: 'a' })] }).run(null)],
      ['iterations', runtimeOf({ maxIterations: 1, stages: cyclic(() => 'loop_back') }).run(null)],
      [
        'edge',
        runtimeOf({
          stages: cyclic(() => 'loop_back'),
          edgeLimits: [{ from: 'stage_c', to: 'stage_a', maxCount: 1 }],
        }).run(null),
      ],
      ['llm', runtimeOf({ maxLlmCalls: 1, stages: [overBudgetTwice('end')] }, echoModel()).run(null)],
    ];
    const reasons: Record<string, string> = {
      hops: 'max_agent_hops_exceeded',
      iterations: 'max_iterations_exceeded',
      edge: 'max_loop_exceeded',
      llm: 'max_llm_calls_exceeded',
    };
    for (const [name, promise] of cases) {
      const env = await promise;
      expect(env.terminated, name).toBe(true);
      expect(env.terminalReason, name).toBe(reasons[name]);
    }
  });

  it('the stream of a bound-terminated run still ends with end', async () => {
    const events = await collect(
      runtimeOf({ maxAgentHops: 2, stages: [stage('a', {}, { defaultNext: 'a' })] }).stream(null),
    );
    expect(types(events)).toEqual(['stage_start:a', 'stage_end:a', 'stage_start:a', 'stage_end:a', 'end']);
    const end = events.at(-1);
    expect(end?.type === 'end' && end.envelope.terminalReason).toBe('max_agent_hops_exceeded');
  });
});

/** A stage making two model calls (the second caught), then ending, failing or interrupting. */
function overBudgetTwice(result: 'end' | 'fail' | 'interrupt'): StageConfig {
  return {
    name: 'a',
    run: async (ctx) => {
      await ctx.model!.generate({ messages: [] });
      await ctx.model!.generate({ messages: [] }).catch(() => undefined);
      if (result === 'fail') throw new Error('x');
      if (result === 'interrupt') ctx.interrupt('checkpoint');
      return {};
    },
  };
}
