import { afterEach, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  Envelope,
  PipelineBoundError,
  type PipelineEvent,
  type RunOptions,
  type StageConfig,
  type StageContext,
  type StageOutput,
} from '@signalyard/pipeline';
import { collect, deferred, echoModel, rejectsCode, runtimeOf, stage, types, type Deferred } from './support.js';

const DAG: RunOptions = { mode: 'parallel' };

/**
 * Stages whose `run` waits until the test opens its gate, so the test decides when each stage
 * ends. `log` records `start:x` / `end:x`; `running` is the set of stages started and not ended.
 */
function gates() {
  const log: string[] = [];
  const running = new Set<string>();
  const gate = new Map<string, Deferred<StageOutput>>();
  const started = new Map<string, Deferred>();
  const get = <T>(map: Map<string, Deferred<T>>, name: string): Deferred<T> => {
    let d = map.get(name);
    if (d === undefined) map.set(name, (d = deferred<T>()));
    return d;
  };
  return {
    log,
    running,
    /** A gated stage. */
    stage(name: string, rest: Partial<StageConfig> = {}): StageConfig {
      return {
        name,
        run: async () => {
          log.push(`start:${name}`);
          running.add(name);
          get(started, name).resolve(undefined);
          try {
            return await get(gate, name).promise;
          } finally {
            running.delete(name);
            log.push(`end:${name}`);
          }
        },
        ...rest,
      };
    },
    /** Resolves when the stage has started. */
    started: (name: string): Promise<void> => get(started, name).promise,
    open(name: string, output: StageOutput = {}): void {
      get(gate, name).resolve(output);
    },
    fail(name: string, error: unknown = new Error(`${name} broke`)): void {
      get(gate, name).reject(error);
    },
  };
}

/**
 * The ready sets of a DAG run, from its events: each maximal group of `stage_start` events with
 * no `stage_end` between them (the stages one scheduling pass started together).
 */
function readySets(events: readonly PipelineEvent[]): string[][] {
  const sets: string[][] = [];
  let current: string[] | undefined;
  for (const e of events) {
    if (e.type === 'stage_start') {
      if (current === undefined) sets.push((current = []));
      current.push(e.stage);
    } else if (e.type === 'stage_end') current = undefined;
  }
  return sets;
}

describe('DAG mode: the ready sets of the source design', () => {
  it('perception; intent requires perception; plan requires perception + intent: [perception], then [intent], then [plan]', async () => {
    const g = gates();
    const runtime = runtimeOf({
      stages: [
        g.stage('perception'),
        g.stage('intent', { requires: ['perception'] }),
        g.stage('plan', { requires: ['perception', 'intent'] }),
      ],
    });
    const events = collect(runtime.stream('hi', DAG));
    await g.started('perception');
    expect([...g.running]).toEqual(['perception']);
    g.open('perception', { seen: true });
    await g.started('intent');
    expect([...g.running]).toEqual(['intent']);
    g.open('intent', { goal: 'book' });
    await g.started('plan');
    expect([...g.running]).toEqual(['plan']);
    g.open('plan', { steps: 2 });
    const all = await events;
    expect(readySets(all)).toEqual([['perception'], ['intent'], ['plan']]);
    const env = (all.at(-1) as Extract<PipelineEvent, { type: 'end' }>).envelope;
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'completed',
      mode: 'parallel',
      completedStages: ['perception', 'intent', 'plan'],
      skippedStages: [],
    });
    expect(g.log).toEqual([
      'start:perception',
      'end:perception',
      'start:intent',
      'end:intent',
      'start:plan',
      'end:plan',
    ]);
  });

  it("source_a, source_b, merger requires both with 'any': initially [source_a, source_b]; once source_a is done merger is ready", async () => {
    const g = gates();
    const runtime = runtimeOf({
      stages: [
        g.stage('source_a'),
        g.stage('source_b'),
        g.stage('merger', { requires: ['source_a', 'source_b'], joinStrategy: 'any' }),
      ],
    });
    const events = collect(runtime.stream(null, DAG));
    await g.started('source_a');
    await g.started('source_b');
    expect([...g.running]).toEqual(['source_a', 'source_b']);
    g.open('source_a', { a: 1 });
    await g.started('merger');
    // source_b is still running: merger did not wait for it
    expect([...g.running].sort()).toEqual(['merger', 'source_b']);
    g.open('merger', { merged: true });
    g.open('source_b', { b: 2 });
    const all = await events;
    expect(readySets(all)).toEqual([['source_a', 'source_b'], ['merger']]);
    const env = (all.at(-1) as Extract<PipelineEvent, { type: 'end' }>).envelope;
    expect(env.terminalReason).toBe('completed');
    expect(env.outputs).toEqual({ source_a: { a: 1 }, source_b: { b: 2 }, merger: { merged: true } });
  });

  it("with 'any', one succeeded requirement is enough even if another failed (the run still ends stage_failed)", async () => {
    const runtime = runtimeOf({
      stages: [
        stage('source_a', { a: 1 }),
        { name: 'source_b', run: () => Promise.reject(new Error('feed down')) },
        stage('merger', { merged: true }, { requires: ['source_a', 'source_b'], joinStrategy: 'any' }),
      ],
    });
    const env = await runtime.run(null, DAG);
    expect(env.completedStages).toEqual(['source_a', 'merger']);
    expect(env.skippedStages).toEqual([]);
    expect(env.errors).toEqual([expect.objectContaining({ stage: 'source_b', error: 'feed down' })]);
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'stage_failed',
      terminationReason: 'stage "source_b" failed: feed down',
    });
  });

  it("with 'any', a stage whose requirements all failed or were skipped is skipped", async () => {
    const runtime = runtimeOf({
      stages: [
        stage('a', { error: 'no data' }),
        stage('b', {}, { requires: ['a'] }),
        stage('c', {}, { requires: ['a', 'b'], joinStrategy: 'any' }),
        stage('d', { d: 1 }),
      ],
    });
    const env = await runtime.run(null, DAG);
    expect(env.skippedStages).toEqual(['b', 'c']);
    expect(env.completedStages).toEqual(['d']);
    expect(env.terminalReason).toBe('stage_failed');
  });
});

describe('DAG mode: concurrency', () => {
  it('two independent stages provably overlap: each waits for the other to have started', async () => {
    const aStarted = deferred();
    const bStarted = deferred();
    const log: string[] = [];
    const runtime = runtimeOf({
      stages: [
        {
          name: 'a',
          run: async () => {
            log.push('start:a');
            aStarted.resolve();
            await bStarted.promise; // sequential execution would never get past this
            log.push('end:a');
            return { a: 1 };
          },
        },
        {
          name: 'b',
          run: async () => {
            log.push('start:b');
            bStarted.resolve();
            await aStarted.promise;
            log.push('end:b');
            return { b: 1 };
          },
        },
      ],
    });
    const env = await runtime.run(null, DAG);
    expect(log.slice(0, 2)).toEqual(['start:a', 'start:b']);
    expect(env).toMatchObject({ terminalReason: 'completed', agentHops: 2, outputs: { a: { a: 1 }, b: { b: 1 } } });
  });

  it('a diamond A -> {B, C} -> D runs B and C together and D once, after both', async () => {
    const g = gates();
    const runtime = runtimeOf({
      stages: [
        g.stage('A'),
        g.stage('B', { requires: ['A'] }),
        g.stage('C', { requires: ['A'] }),
        g.stage('D', { requires: ['B', 'C'] }),
      ],
    });
    const events = collect(runtime.stream(null, DAG));
    await g.started('A');
    g.open('A', { a: 1 });
    await g.started('B');
    await g.started('C');
    expect([...g.running]).toEqual(['B', 'C']);
    g.open('C', { c: 1 });
    g.open('B', { b: 1 });
    await g.started('D');
    expect(g.log.indexOf('start:D')).toBeGreaterThan(g.log.indexOf('end:B'));
    g.open('D', { d: 1 });
    const all = await events;
    expect(readySets(all)).toEqual([['A'], ['B', 'C'], ['D']]);
    const env = (all.at(-1) as Extract<PipelineEvent, { type: 'end' }>).envelope;
    expect(env.completedStages).toEqual(['A', 'C', 'B', 'D']);
    expect(env.trace.map((t) => t.stage)).toEqual(['A', 'C', 'B', 'D']);
    expect(env).toMatchObject({ terminalReason: 'completed', agentHops: 4, currentStage: 'end' });
  });

  it('ready stages start in stage order, whatever the order of their requirements', async () => {
    const env = await runtimeOf({
      stages: [stage('late', {}, { requires: ['root'] }), stage('early', {}, { requires: ['root'] }), stage('root')],
    }).run(null, DAG);
    expect(env.trace.map((t) => t.stage)).toEqual(['root', 'late', 'early']);
  });

  it('a stage sees the outputs of the stages that finished before it started', async () => {
    const seen: unknown[] = [];
    const env = await runtimeOf({
      stages: [
        stage('a', { x: 1 }),
        {
          name: 'b',
          requires: ['a'],
          run: (ctx: StageContext) => (seen.push({ ...ctx.outputs }, ctx.envelope.completedStages), { y: 2 }),
        },
      ],
    }).run(null, DAG);
    expect(seen).toEqual([{ a: { x: 1 } }, ['a']]);
    expect(env.outputs).toEqual({ a: { x: 1 }, b: { y: 2 } });
  });

  it('a stage with no requirements and no after runs even when listed last', async () => {
    const env = await runtimeOf({ stages: [stage('a', {}, { requires: ['b'] }), stage('b')] }).run(null, DAG);
    expect(env.completedStages).toEqual(['b', 'a']);
  });
});

describe('DAG mode: outputs and counters (regressions of the source system)', () => {
  it('regression: outputs are kept under each stage outputKey, also when it differs from the stage name', async () => {
    const env = await runtimeOf({
      stages: [
        stage('fetch_weather', { temp: 21 }, { outputKey: 'weather' }),
        { name: 'fetch_news', outputKey: 'news', run: async () => ({ items: 3 }) },
        {
          name: 'brief',
          outputKey: 'summary',
          requires: ['fetch_weather', 'fetch_news'],
          run: (ctx) => ({
            text: `${String((ctx.outputs.weather as { temp: number }).temp)}/${String((ctx.outputs.news as { items: number }).items)}`,
          }),
        },
      ],
    }).run(null, DAG);
    expect(env.outputs).toEqual({ weather: { temp: 21 }, news: { items: 3 }, summary: { text: '21/3' } });
    expect(env.completedStages).toEqual(['fetch_weather', 'fetch_news', 'brief']);
  });

  it('regression: counters of concurrent stages are merged: maxLlmCalls holds across them', async () => {
    const model = echoModel();
    const refused: unknown[] = [];
    const caller = (name: string): StageConfig => ({
      name,
      requires: ['start'],
      run: async (ctx) => {
        for (let i = 0; i < 2; i++) {
          try {
            await ctx.model!.generate({ messages: [] });
          } catch (error) {
            refused.push(error);
          }
        }
        return {};
      },
    });
    const env = await runtimeOf(
      { maxLlmCalls: 4, stages: [stage('start'), caller('b1'), caller('b2'), caller('b3')] },
      model,
    ).run(null, DAG);
    expect(model.calls).toHaveLength(4);
    expect(env.llmCalls).toBe(4);
    expect(refused).toHaveLength(2);
    expect(refused.every((e) => PipelineBoundError.isInstance(e))).toBe(true);
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'max_llm_calls_exceeded',
      terminationReason: 'max llm calls exceeded: 4',
    });
    // the stages caught the refusal: they ran to the end and their outputs are kept
    expect([...env.completedStages].sort()).toEqual(['b1', 'b2', 'b3', 'start']);
  });

  it('regression: maxAgentHops holds across concurrent stages: the ready stages past the bound never start', async () => {
    const started: string[] = [];
    const s = (name: string, rest: Partial<StageConfig> = {}): StageConfig => ({
      name,
      run: async () => (started.push(name), {}),
      ...rest,
    });
    const env = await runtimeOf({
      maxAgentHops: 3,
      stages: [
        s('A'),
        s('B1', { requires: ['A'] }),
        s('B2', { requires: ['A'] }),
        s('B3', { requires: ['A'] }),
        s('C', { requires: ['B1', 'B2', 'B3'] }),
      ],
    }).run(null, DAG);
    expect(started).toEqual(['A', 'B1', 'B2']);
    expect(env).toMatchObject({
      agentHops: 3,
      terminated: true,
      terminalReason: 'max_agent_hops_exceeded',
      terminationReason: 'max agent hops exceeded: 3',
      currentStage: 'B2',
    });
    expect(env.completedStages).toEqual(['A', 'B1', 'B2']);
  });

  it('a run can tighten the bounds (bounds option) in DAG mode too', async () => {
    const env = await runtimeOf({ stages: [stage('a'), stage('b'), stage('c')] }).run(null, {
      mode: 'parallel',
      bounds: { maxAgentHops: 2 },
    });
    expect(env).toMatchObject({ agentHops: 2, terminalReason: 'max_agent_hops_exceeded' });
  });

  it('iteration and edge traversals stay untouched: DAG mode has no transitions', async () => {
    const env = await runtimeOf({ stages: [stage('a'), stage('b', {}, { requires: ['a'] })] }).run(null, DAG);
    expect(env.iteration).toBe(0);
    expect(env.edgeTraversals).toEqual({});
  });
});

describe('DAG mode: failures', () => {
  it("regression: a failed stage's dependents are skipped and recorded, the others go on, and the run ends stage_failed instead of waiting forever", async () => {
    const g = gates();
    const runtime = runtimeOf({
      stages: [
        g.stage('fetch'),
        g.stage('other'),
        g.stage('parse', { requires: ['fetch'] }),
        g.stage('index', { requires: ['parse'] }),
        g.stage('report', { requires: ['other'] }),
      ],
    });
    const result = runtime.run(null, DAG);
    await g.started('fetch');
    await g.started('other');
    g.fail('fetch', Object.assign(new Error('HTTP 503'), { code: 'E_HTTP' }));
    g.open('other', { ok: true });
    await g.started('report');
    g.open('report', { sent: true });
    const env = await result;
    expect(env.skippedStages).toEqual(['parse', 'index']);
    expect(env.completedStages).toEqual(['other', 'report']);
    expect(env.errors).toEqual([{ stage: 'fetch', error: 'HTTP 503', code: 'E_HTTP', at: expect.any(String) }]);
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'stage_failed',
      terminationReason: 'stage "fetch" failed: HTTP 503',
    });
    expect(g.log).not.toContain('start:parse');
  });

  it('every kind of failure fails the stage: a throw, a truthy error field (output kept), an invalid output, a stage timeout', async () => {
    vi.useFakeTimers();
    try {
      const runtime = runtimeOf({
        stages: [
          {
            name: 'thrower',
            run: () => {
              throw new Error('boom');
            },
          },
          stage('reporter', { error: 'bad input', partial: 1 }),
          { name: 'invalid', run: () => 42 as unknown as StageOutput },
          {
            name: 'slow',
            timeoutMs: 50,
            run: (ctx) =>
              new Promise<StageOutput>((_, reject) =>
                ctx.abortSignal.addEventListener('abort', () => reject(new Error('stopped'))),
              ),
          },
          stage('fine', { ok: true }),
        ],
      });
      const result = runtime.run(null, DAG);
      await vi.advanceTimersByTimeAsync(50);
      const env = await result;
      expect(env.errors.map((e) => [e.stage, e.code])).toEqual([
        ['thrower', undefined],
        ['reporter', undefined],
        ['invalid', 'PIPELINE_STAGE_OUTPUT_INVALID'],
        ['slow', 'PIPELINE_STAGE_TIMEOUT'],
      ]);
      expect(env.outputs).toEqual({ reporter: { error: 'bad input', partial: 1 }, fine: { ok: true } });
      expect(env.completedStages).toEqual(['fine']);
      expect(env.terminalReason).toBe('stage_failed');
      expect(env.terminationReason).toBe('4 stages failed: "thrower", "reporter", "invalid", "slow" (first: boom)');
    } finally {
      vi.useRealTimers();
    }
  });

  it('the stream reports a failed stage with failed: true and next "end"', async () => {
    const events = await collect(runtimeOf({ stages: [stage('a', { error: true })] }).stream(null, DAG));
    expect(events[1]).toEqual({ type: 'stage_end', stage: 'a', output: { error: true }, failed: true, next: 'end' });
  });
});

describe('DAG mode: after (soft ordering)', () => {
  it('a stage waits for its after stages when they run', async () => {
    const g = gates();
    const runtime = runtimeOf({ stages: [g.stage('first'), g.stage('second', { after: ['first'] })] });
    const result = runtime.run(null, DAG);
    await g.started('first');
    expect([...g.running]).toEqual(['first']);
    g.open('first');
    await g.started('second');
    g.open('second');
    expect((await result).completedStages).toEqual(['first', 'second']);
    expect(g.log).toEqual(['start:first', 'end:first', 'start:second', 'end:second']);
  });

  it('an after stage that will not run (skipped) is not waited for', async () => {
    const env = await runtimeOf({
      stages: [
        stage('broken', { error: 'down' }),
        stage('optional', {}, { requires: ['broken'] }),
        stage('tail', { done: true }, { after: ['optional'] }),
      ],
    }).run(null, DAG);
    expect(env.skippedStages).toEqual(['optional']);
    expect(env.completedStages).toEqual(['tail']);
    expect(env.outputs.tail).toEqual({ done: true });
    expect(env.terminalReason).toBe('stage_failed');
  });

  it('an after stage that failed counts as run: its after-dependents still run, unlike its requires-dependents', async () => {
    const env = await runtimeOf({
      stages: [stage('a', { error: 'x' }), stage('soft', {}, { after: ['a'] }), stage('hard', {}, { requires: ['a'] })],
    }).run(null, DAG);
    expect(env.completedStages).toEqual(['soft']);
    expect(env.skippedStages).toEqual(['hard']);
  });

  it('stages waiting on each other only through after (an ordering cycle) do not wait forever: the first starts, with a warning', async () => {
    const events = await collect(
      runtimeOf({
        stages: [
          stage('x', {}, { after: ['y'] }),
          stage('y', {}, { after: ['x'] }),
          stage('z', {}, { requires: ['x'], after: ['y'] }),
        ],
      }).stream(null, DAG),
    );
    expect(types(events)).toEqual([
      'warning',
      'stage_start:x',
      'stage_end:x',
      'stage_start:y',
      'stage_end:y',
      'stage_start:z',
      'stage_end:z',
      'end',
    ]);
    const warning = events[0] as Extract<PipelineEvent, { type: 'warning' }>;
    expect(warning.message).toBe(
      'Stages "x", "y", "z" wait on each other through "after" (an ordering cycle): starting "x" without waiting',
    );
    expect((events.at(-1) as Extract<PipelineEvent, { type: 'end' }>).envelope.terminalReason).toBe('completed');
  });

  it('breaking an ordering cycle still respects maxAgentHops', async () => {
    const env = await runtimeOf({
      maxAgentHops: 1,
      stages: [stage('a'), stage('x', {}, { after: ['y'] }), stage('y', {}, { after: ['x'] })],
    }).run(null, DAG);
    expect(env).toMatchObject({ agentHops: 1, terminalReason: 'max_agent_hops_exceeded', completedStages: ['a'] });
  });

  it('a requires / after cycle is broken the same way', async () => {
    const env = await runtimeOf({
      stages: [stage('a', {}, { requires: ['b'] }), stage('b', {}, { after: ['a'] })],
    }).run(null, DAG);
    expect(env.completedStages).toEqual(['b', 'a']);
  });
});

describe('DAG mode: routing settings', () => {
  it('routing rules, defaultNext and errorNext are not used, with one warning naming every stage that has them', async () => {
    const ran: string[] = [];
    const s = (name: string, output: Record<string, unknown>, rest: Partial<StageConfig> = {}): StageConfig => ({
      name,
      run: () => (ran.push(name), output),
      ...rest,
    });
    const events = await collect(
      runtimeOf({
        stages: [
          s('a', { go: 'c' }, { routingRules: [{ condition: 'go', value: 'c', target: 'c' }], defaultNext: 'b' }),
          s('b', { error: 'x' }, { requires: ['a'], errorNext: 'c' }),
          s('c', {}, { requires: ['b'] }),
        ],
      }).stream(null, DAG),
    );
    const warnings = events.filter((e) => e.type === 'warning');
    expect(warnings).toEqual([
      {
        type: 'warning',
        message:
          'DAG mode does not route: it ignores the routing settings of stages "a" (routingRules, defaultNext), "b" (errorNext); stages run by requires / after',
      },
    ]);
    expect(events[0]).toBe(warnings[0]);
    expect(ran).toEqual(['a', 'b']);
    const env = (events.at(-1) as Extract<PipelineEvent, { type: 'end' }>).envelope;
    expect(env.skippedStages).toEqual(['c']);
    expect(env.trace.map((t) => t.next)).toEqual(['end', 'end']);
  });

  it('no warning when no stage has routing settings', async () => {
    const events = await collect(
      runtimeOf({ stages: [stage('a'), stage('b', {}, { requires: ['a'] })] }).stream(null, DAG),
    );
    expect(types(events)).toEqual(['stage_start:a', 'stage_end:a', 'stage_start:b', 'stage_end:b', 'end']);
  });

  it('a stage routing to clarification does not pause a DAG run', async () => {
    const env = await runtimeOf({ stages: [stage('a', { q: 1 }, { defaultNext: 'clarification' })] }).run(null, DAG);
    expect(env).toMatchObject({ terminated: true, terminalReason: 'completed' });
    expect(env.interrupt).toBeUndefined();
  });
});

describe('DAG mode: the envelope', () => {
  it('records mode parallel, completedStages, skippedStages and currentStage as the last stage started', async () => {
    const env = await runtimeOf({
      stages: [stage('a'), stage('b', { error: 'e' }), stage('c', {}, { requires: ['b'] })],
    }).run('in', { mode: 'parallel', envelopeId: 'run-1' });
    expect(env).toMatchObject({
      id: 'run-1',
      input: 'in',
      mode: 'parallel',
      completedStages: ['a'],
      skippedStages: ['c'],
      currentStage: 'b',
      agentHops: 2,
    });
  });

  it('a sequential run still records mode sequential', async () => {
    expect((await runtimeOf({ stages: [stage('a')] }).run(null)).mode).toBe('sequential');
  });

  it('the mode option is typed', () => {
    expectTypeOf<RunOptions['mode']>().toEqualTypeOf<'sequential' | 'parallel' | undefined>();
    expectTypeOf<Envelope['skippedStages']>().toEqualTypeOf<readonly string[]>();
  });

  it('rejects an unknown mode with PIPELINE_ARGUMENT_INVALID', async () => {
    const e = await rejectsCode(
      runtimeOf({ stages: [stage('a')] }).run(null, { mode: 'dag' as never }),
      'PIPELINE_ARGUMENT_INVALID',
    );
    expect(e.message).toContain('"dag"');
  });
});

describe('DAG mode: interrupts and resume', () => {
  /** A -> {B, C} -> D; E requires C. B asks a question unless answered; C is gated. */
  function branches() {
    const g = gates();
    const responses: unknown[] = [];
    const runs: string[] = [];
    const runtime = runtimeOf({
      stages: [
        stage('A', { a: 1 }),
        {
          name: 'B',
          requires: ['A'],
          run: (ctx) => {
            runs.push('B');
            responses.push(ctx.response);
            if (ctx.response === undefined) ctx.interrupt('clarification', { question: 'Which city?' });
            return { city: ctx.response?.text };
          },
        },
        g.stage('C', { requires: ['A'] }),
        {
          name: 'D',
          requires: ['B', 'C'],
          run: (ctx) => (runs.push('D'), { both: [ctx.outputs.B, ctx.outputs.C], response: ctx.response }),
        },
        { name: 'E', requires: ['C'], run: () => (runs.push('E'), { e: 1 }) },
      ],
    });
    return { g, runtime, responses, runs };
  }

  it('an interrupt in one branch lets the running stages finish, starts no new ones, and pauses the run', async () => {
    const { g, runtime, runs } = branches();
    const result = collect(runtime.stream('trip', DAG));
    await g.started('C');
    g.open('C', { c: 1 });
    const events = await result;
    expect(types(events)).toEqual([
      'stage_start:A',
      'stage_end:A',
      'stage_start:B',
      'stage_end:B',
      'stage_start:C',
      'stage_end:C',
      'interrupt',
      'end',
    ]);
    const env = (events.at(-1) as Extract<PipelineEvent, { type: 'end' }>).envelope;
    expect(env).toMatchObject({
      terminated: false,
      mode: 'parallel',
      completedStages: ['A', 'C'],
      skippedStages: [],
      outputs: { A: { a: 1 }, C: { c: 1 } },
    });
    expect(env.terminalReason).toBeUndefined();
    expect(env.interrupt).toMatchObject({ kind: 'clarification', stage: 'B', payload: { question: 'Which city?' } });
    expect(events.at(-2)).toEqual({ type: 'interrupt', interrupt: env.interrupt });
    // E became ready when C finished, but the run was pausing
    expect(runs).toEqual(['B']);
    expect(env.trace.map((t) => `${t.stage}->${t.next}`)).toEqual(['A->end', 'B->clarification', 'C->end']);
  });

  it('resume continues the DAG: done stages stay done, the raising stage runs again with the answer, the rest follow', async () => {
    const { g, runtime, responses, runs } = branches();
    const result = runtime.run('trip', DAG);
    await g.started('C');
    g.open('C', { c: 1 });
    const paused = await result;
    const events = await collect(runtime.resumeStream(paused, { text: 'Oslo' }));
    // B and E were both ready when the run paused (E held back): they form the first ready set
    expect(types(events)).toEqual([
      'stage_start:B',
      'stage_end:B',
      'stage_start:E',
      'stage_end:E',
      'stage_start:D',
      'stage_end:D',
      'end',
    ]);
    const env = (events.at(-1) as Extract<PipelineEvent, { type: 'end' }>).envelope;
    expect(responses).toEqual([undefined, { text: 'Oslo' }]);
    expect(runs).toEqual(['B', 'B', 'E', 'D']);
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'completed',
      completedStages: ['A', 'C', 'B', 'E', 'D'],
      agentHops: 6,
      outputs: { B: { city: 'Oslo' }, D: { both: [{ city: 'Oslo' }, { c: 1 }] } },
    });
    // only the raising stage sees the answer
    expect((env.outputs.D as { response?: unknown }).response).toBeUndefined();
    expect(env.interrupt).toBeUndefined();
    expect(env.resolvedInterrupts).toEqual([
      { ...paused.interrupt, response: { text: 'Oslo' }, resolvedAt: expect.any(String) },
    ]);
    expect(g.log.filter((l) => l === 'start:C')).toHaveLength(1);
    // the paused envelope is not changed
    expect(paused.terminated).toBe(false);
    expect(paused.completedStages).toEqual(['A', 'C']);
  });

  it('the Envelope JSON round-trip mid-DAG is equal, and resuming the rebuilt envelope continues the same DAG', async () => {
    const { g, runtime } = branches();
    const result = runtime.run('trip', DAG);
    await g.started('C');
    g.open('C', { c: 1 });
    const paused = await result;
    const rebuilt = Envelope.fromJSON(JSON.parse(JSON.stringify(paused)));
    expect(rebuilt).toEqual(paused);
    expect(Envelope.fromJSON(paused.toJSON())).toEqual(paused);
    expect(rebuilt.mode).toBe('parallel');
    const done = await runtime.resume(rebuilt, { text: 'Rome' });
    expect(done).toMatchObject({ terminalReason: 'completed', completedStages: ['A', 'C', 'B', 'E', 'D'] });
  });

  it('a failure before the pause is kept: after resume its dependents are skipped and the run ends stage_failed', async () => {
    const runtime = runtimeOf({
      stages: [
        stage('bad', { error: 'nope' }),
        stage('needsBad', {}, { requires: ['bad'] }),
        { name: 'ask', run: (ctx) => (ctx.response === undefined ? ctx.interrupt('checkpoint') : { ok: true }) },
      ],
    });
    const paused = await runtime.run(null, DAG);
    expect(paused.interrupt?.kind).toBe('checkpoint');
    expect(paused.skippedStages).toEqual(['needsBad']);
    const env = await runtime.resume(Envelope.fromJSON(paused.toJSON()), { decision: 'go' });
    expect(env).toMatchObject({
      terminalReason: 'stage_failed',
      completedStages: ['ask'],
      skippedStages: ['needsBad'],
    });
    expect(env.errors).toHaveLength(1);
  });

  it('a second interrupt raised while pausing gives a warning, and its stage runs again after resume', async () => {
    const asked: string[] = [];
    const asker = (name: string): StageConfig => ({
      name,
      run: (ctx) => {
        asked.push(`${name}:${ctx.response?.text ?? '-'}`);
        return ctx.response === undefined ? ctx.interrupt('clarification', name) : { answer: ctx.response.text };
      },
    });
    const runtime = runtimeOf({ stages: [asker('q1'), asker('q2')] });
    const events = await collect(runtime.stream(null, DAG));
    expect(types(events)).toEqual([
      'stage_start:q1',
      'stage_end:q1',
      'stage_start:q2',
      'stage_end:q2',
      'warning',
      'interrupt',
      'end',
    ]);
    expect((events[4] as Extract<PipelineEvent, { type: 'warning' }>).message).toBe(
      'Stage "q2" raised a clarification interrupt while the run was already pausing on the clarification interrupt of stage "q1": it runs again after resume',
    );
    const first = (events.at(-1) as Extract<PipelineEvent, { type: 'end' }>).envelope;
    expect(first.interrupt?.stage).toBe('q1');
    const second = await runtime.resume(first, { text: 'one' });
    expect(second.interrupt?.stage).toBe('q2');
    expect(second.completedStages).toEqual(['q1']);
    const done = await runtime.resume(second, { text: 'two' });
    expect(done).toMatchObject({
      terminalReason: 'completed',
      outputs: { q1: { answer: 'one' }, q2: { answer: 'two' } },
    });
    expect(asked).toEqual(['q1:-', 'q2:-', 'q1:one', 'q2:-', 'q2:two']);
  });

  it('a denied confirmation ends the DAG run user_denied', async () => {
    const runtime = runtimeOf({
      stages: [
        { name: 'c', run: (ctx) => (ctx.response === undefined ? ctx.interrupt('confirmation', 'sure?') : {}) },
        stage('after', {}, { requires: ['c'] }),
      ],
    });
    const paused = await runtime.run(null, DAG);
    const env = await runtime.resume(paused, { approved: false });
    expect(env).toMatchObject({ terminated: true, terminalReason: 'user_denied', completedStages: [] });
  });

  it('a configured resume stage is not used in DAG mode: the raising stage runs again, with a warning', async () => {
    const seen: unknown[] = [];
    const runtime = runtimeOf({
      clarificationResumeStage: 'first',
      stages: [
        { name: 'first', run: (ctx) => (seen.push(['first', ctx.response]), {}) },
        {
          name: 'ask',
          requires: ['first'],
          run: (ctx) => (
            seen.push(['ask', ctx.response]),
            ctx.response === undefined ? ctx.interrupt('clarification') : {}
          ),
        },
      ],
    });
    const paused = await runtime.run(null, DAG);
    const events = await collect(runtime.resumeStream(paused, { text: 'yes' }));
    expect(events[0]).toEqual({
      type: 'warning',
      message:
        'DAG mode resumes at the stage that raised the interrupt ("ask"), not at the configured resume stage "first"',
    });
    expect(seen).toEqual([
      ['first', undefined],
      ['ask', undefined],
      ['ask', { text: 'yes' }],
    ]);
    expect((events.at(-1) as Extract<PipelineEvent, { type: 'end' }>).envelope.terminalReason).toBe('completed');
  });

  it('interrupt TTLs apply in DAG mode', async () => {
    vi.useFakeTimers();
    try {
      const runtime = runtimeOf({
        interruptTtlMs: { agent_review: 1000 },
        stages: [{ name: 'r', run: (ctx) => ctx.interrupt('agent_review') }],
      });
      const paused = await runtime.run(null, DAG);
      expect(Date.parse(paused.interrupt!.expiresAt!) - Date.parse(paused.interrupt!.createdAt)).toBe(1000);
      vi.advanceTimersByTime(1000);
      await rejectsCode(runtime.resume(paused, {}), 'INTERRUPT_EXPIRED');
    } finally {
      vi.useRealTimers();
    }
  });

  it('resume refuses the raising stage when maxAgentHops is used up', async () => {
    const runtime = runtimeOf({
      maxAgentHops: 1,
      stages: [{ name: 'r', run: (ctx) => (ctx.response === undefined ? ctx.interrupt('checkpoint') : {}) }],
    });
    const paused = await runtime.run(null, DAG);
    expect(paused.agentHops).toBe(1);
    expect(await runtime.resume(paused, {})).toMatchObject({ terminalReason: 'max_agent_hops_exceeded', agentHops: 1 });
  });

  it('rejects resuming a DAG envelope whose progress names stages this pipeline lacks (PIPELINE_ENVELOPE_INVALID)', async () => {
    const runtime = runtimeOf({
      stages: [
        stage('a'),
        { name: 'r', run: (ctx) => (ctx.response === undefined ? ctx.interrupt('checkpoint') : {}) },
      ],
    });
    const paused = (await runtime.run(null, DAG)).toJSON();
    for (const [patch, path] of [
      [{ completedStages: ['ghost'] }, 'envelope.completedStages[0]'],
      [{ skippedStages: ['ghost'] }, 'envelope.skippedStages[0]'],
      [{ errors: [{ stage: 'ghost', error: 'x', at: new Date().toISOString() }] }, 'envelope.errors[0].stage'],
    ] as const) {
      const e = await rejectsCode(
        runtime.resume(Envelope.fromJSON({ ...paused, ...patch }), {}),
        'PIPELINE_ENVELOPE_INVALID',
      );
      expect(e).toMatchObject({ argument: path });
      expect(e.message).toContain('"ghost"');
    }
  });

  it('resumes a DAG envelope with NO_PENDING_INTERRUPT when it is not paused', async () => {
    const env = await runtimeOf({ stages: [stage('a')] }).run(null, DAG);
    await rejectsCode(runtimeOf({ stages: [stage('a')] }).resume(env, {}), 'NO_PENDING_INTERRUPT');
  });
});

describe('DAG mode: cancellation and timeouts', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A stage that waits until its signal fires. */
  const waiter = (name: string, aborted: string[], rest: Partial<StageConfig> = {}): StageConfig => ({
    name,
    run: (ctx) =>
      new Promise<StageOutput>(() => {
        ctx.abortSignal.addEventListener('abort', () => aborted.push(name));
      }),
    ...rest,
  });

  it('cancellation aborts every running stage, starts nothing new and ends user_cancelled', async () => {
    const aborted: string[] = [];
    const controller = new AbortController();
    const runtime = runtimeOf({
      stages: [waiter('a', aborted), waiter('b', aborted, { timeoutMs: 10_000 }), stage('c', {}, { requires: ['a'] })],
    });
    const result = runtime.run(null, { mode: 'parallel', abortSignal: controller.signal });
    await Promise.resolve();
    controller.abort(new Error('user left'));
    const env = await result;
    expect(aborted).toEqual(['a', 'b']);
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'user_cancelled',
      terminationReason: 'cancelled: user left',
      completedStages: [],
      agentHops: 2,
    });
    expect(env.errors.map((e) => [e.stage, e.code, e.error])).toEqual([
      ['a', 'ABORTED', 'aborted: user left'],
      ['b', 'ABORTED', 'aborted: user left'],
    ]);
  });

  it('an already aborted signal runs no stage', async () => {
    const controller = new AbortController();
    controller.abort();
    const env = await runtimeOf({ stages: [stage('a')] }).run(null, {
      mode: 'parallel',
      abortSignal: controller.signal,
    });
    expect(env).toMatchObject({ terminalReason: 'user_cancelled', agentHops: 0 });
  });

  it("the run's timeoutMs ends it timeout_exceeded", async () => {
    const aborted: string[] = [];
    const result = runtimeOf({ stages: [waiter('a', aborted), waiter('b', aborted)] }).run(null, {
      mode: 'parallel',
      timeoutMs: 100,
    });
    await vi.advanceTimersByTimeAsync(100);
    const env = await result;
    expect(env).toMatchObject({ terminated: true, terminalReason: 'timeout_exceeded' });
    expect(aborted).toEqual(['a', 'b']);
  });

  it('a stage that cancels the run stops the DAG before the next stage starts', async () => {
    const controller = new AbortController();
    const env = await runtimeOf({
      stages: [
        {
          name: 'a',
          run: () => {
            controller.abort(new Error('enough'));
            return {};
          },
        },
        stage('b'),
      ],
    }).run(null, { mode: 'parallel', abortSignal: controller.signal });
    expect(env).toMatchObject({ terminalReason: 'user_cancelled', completedStages: ['a'], agentHops: 1 });
  });

  it('breaking out of the stream cancels the running stages', async () => {
    const aborted: string[] = [];
    const runtime = runtimeOf({ stages: [waiter('a', aborted), waiter('b', aborted)] });
    for await (const event of runtime.stream(null, DAG)) {
      if (event.type === 'stage_start' && event.stage === 'b') break;
    }
    expect(aborted).toEqual(['a', 'b']);
  });
});
