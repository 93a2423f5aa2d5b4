import { describe, expect, it } from 'vitest';
import { ConfigError, type ConfigProblem } from '@signalyard/core';
import {
  DEFAULT_BOUNDS,
  definePipeline,
  Pipeline,
  PipelineConfigError,
  type PipelineConfig,
  type StageConfig,
} from '@signalyard/pipeline';
import { stage, thrown } from './support.js';

const run = (): Record<string, unknown> => ({});

/** The problems `definePipeline(config)` reports (the config is deliberately malformed). */
function problemsOf(config: unknown): readonly ConfigProblem[] {
  const error = thrown(() => definePipeline(config as PipelineConfig));
  if (!PipelineConfigError.isInstance(error)) throw error;
  expect(error.code).toBe('CONFIG_INVALID');
  expect(ConfigError.isInstance(error)).toBe(true);
  return error.problems;
}

function paths(config: unknown): string[] {
  return problemsOf(config).map((p) => p.path);
}

describe('definePipeline', () => {
  it('returns a Pipeline exposing its name, stages in order and the default bounds', () => {
    const p = definePipeline({ name: 'review', stages: [stage('draft'), stage('review')] });
    expect(Pipeline.isInstance(p)).toBe(true);
    expect(p.name).toBe('review');
    expect(p.stages.map((s) => s.name)).toEqual(['draft', 'review']);
    expect(p.maxIterations).toBe(3);
    expect(p.maxLlmCalls).toBe(10);
    expect(p.maxAgentHops).toBe(21);
    expect(p.bounds).toEqual(DEFAULT_BOUNDS);
    expect(p.edgeLimits).toEqual([]);
    expect(p.interruptTtlMs).toEqual({});
    expect(p.clarificationResumeStage).toBeUndefined();
    expect(p.confirmationResumeStage).toBeUndefined();
  });

  it('resolves configured bounds, edge limits and interrupt settings', () => {
    const p = definePipeline({
      name: 'p',
      stages: [stage('a'), stage('b')],
      maxIterations: 7,
      maxLlmCalls: 2,
      maxAgentHops: 50,
      edgeLimits: [{ from: 'b', to: 'a', maxCount: 4 }],
      clarificationResumeStage: 'a',
      confirmationResumeStage: 'b',
      interruptTtlMs: { clarification: 1000 },
    });
    expect(p.bounds).toEqual({ maxIterations: 7, maxLlmCalls: 2, maxAgentHops: 50 });
    expect(p.edgeLimits).toEqual([{ from: 'b', to: 'a', maxCount: 4 }]);
    expect(p.clarificationResumeStage).toBe('a');
    expect(p.confirmationResumeStage).toBe('b');
    expect(p.interruptTtlMs).toEqual({ clarification: 1000 });
  });

  it('is immutable and unaffected by later changes to the configuration', () => {
    const rules = [{ condition: 'v', value: 1, target: 'end' }];
    const stages: StageConfig[] = [{ name: 'a', run, routingRules: rules }];
    const p = definePipeline({ name: 'p', stages });
    stages.push(stage('b'));
    rules[0]!.target = 'a';
    expect(p.stages).toHaveLength(1);
    expect(p.stages[0]!.routingRules![0]!.target).toBe('end');
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.isFrozen(p.stages)).toBe(true);
    expect(Object.isFrozen(p.stages[0])).toBe(true);
    expect(Object.isFrozen(p.stages[0]!.routingRules)).toBe(true);
    expect(Object.isFrozen(p.bounds)).toBe(true);
    expect(() => {
      (p as { name: string }).name = 'x';
    }).toThrow(TypeError);
  });

  it('keeps a stage run that is a method of a class instance', async () => {
    class Stage {
      readonly name = 'a';
      run(): Record<string, unknown> {
        return { ok: true };
      }
    }
    const p = definePipeline({ name: 'p', stages: [new Stage()] });
    expect(typeof p.stages[0]!.run).toBe('function');
  });

  it('Pipeline.isInstance rejects look-alikes', () => {
    expect(Pipeline.isInstance({ name: 'p', stages: [] })).toBe(false);
    expect(Pipeline.isInstance(null)).toBe(false);
    expect(Pipeline.isInstance('p')).toBe(false);
  });
});

describe('definePipeline validation', () => {
  it('reports every problem at once, each with its path', () => {
    const problems = problemsOf({
      name: '',
      stages: [
        { name: 'a', run, defaultNext: 'nowhere' },
        { name: 'a', run },
        { name: 'end', run },
        {
          name: 'c',
          run: 'not a function',
          errorNext: 'missing',
          routingRules: [{ condition: '', value: 1, target: 'zzz' }],
        },
      ],
      maxIterations: 0,
    });
    expect(problems.map((p) => p.path)).toEqual([
      'name',
      'stages[1].name',
      'stages[2].name',
      'stages[0].defaultNext',
      'stages[3].run',
      'stages[3].routingRules[0].condition',
      'stages[3].routingRules[0].target',
      'stages[3].errorNext',
      'maxIterations',
    ]);
    for (const p of problems) expect(p.message.length).toBeGreaterThan(0);
  });

  it('names the pipeline and every problem in the message', () => {
    const error = thrown(() =>
      definePipeline({ name: 'review', stages: [stage('a', {}, { defaultNext: 'nowhere' })] }),
    );
    expect(PipelineConfigError.isInstance(error)).toBe(true);
    const e = error as PipelineConfigError;
    expect(e.pipeline).toBe('review');
    expect(e.message).toContain('"review"');
    expect(e.message).toContain('stages[0].defaultNext');
    expect(e.message).toContain('"nowhere"');
    expect(e.problems[0]!.message).toContain('"a"');
  });

  it('rejects a configuration that is not an object', () => {
    expect(paths(null)).toEqual(['']);
    expect(paths('pipeline')).toEqual(['']);
    expect(paths([])).toEqual(['']);
  });

  it('rejects missing, empty and non-array stage lists', () => {
    expect(paths({ name: 'p' })).toEqual(['stages']);
    expect(paths({ name: 'p', stages: [] })).toEqual(['stages']);
    expect(paths({ name: 'p', stages: {} })).toEqual(['stages']);
  });

  it('rejects blank and non-string names', () => {
    expect(paths({ name: '   ', stages: [stage('a')] })).toEqual(['name']);
    expect(paths({ name: 1, stages: [stage('a')] })).toEqual(['name']);
    expect(paths({ name: 'p', stages: [{ name: '', run }] })).toEqual(['stages[0].name']);
    expect(paths({ name: 'p', stages: [{ run }] })).toEqual(['stages[0].name']);
  });

  it('rejects stage entries that are not objects', () => {
    expect(paths({ name: 'p', stages: [stage('a'), 42, null] })).toEqual(['stages[1]', 'stages[2]']);
  });

  it('rejects reserved and duplicate stage names', () => {
    for (const reserved of ['end', 'clarification', 'confirmation', '__proto__']) {
      expect(paths({ name: 'p', stages: [stage(reserved)] })).toEqual(['stages[0].name']);
    }
    const [dup] = problemsOf({ name: 'p', stages: [stage('a'), stage('b'), stage('a')] });
    expect(dup).toMatchObject({ path: 'stages[2].name' });
    expect(dup!.message).toContain('stages[0]');
  });

  it('accepts every kind of routing target and rejects unknown ones', () => {
    const ok = definePipeline({
      name: 'p',
      stages: [
        stage(
          'a',
          {},
          {
            routingRules: [
              { condition: 'x', value: 1, target: 'b' },
              { condition: 'x', value: 2, target: 'clarification' },
              { condition: 'x', value: 3, target: 'confirmation' },
              { condition: 'x', value: 4, target: 'end' },
            ],
            defaultNext: 'a',
            errorNext: 'b',
          },
        ),
        stage('b'),
      ],
    });
    expect(ok.stages).toHaveLength(2);
    expect(paths({ name: 'p', stages: [stage('a', {}, { defaultNext: 'A' })] })).toEqual(['stages[0].defaultNext']);
    expect(paths({ name: 'p', stages: [stage('a', {}, { errorNext: 3 as unknown as string })] })).toEqual([
      'stages[0].errorNext',
    ]);
  });

  it('rejects malformed routing rules, but accepts one whose value is undefined (it never matches)', () => {
    expect(paths({ name: 'p', stages: [stage('a', {}, { routingRules: 'x' as never })] })).toEqual([
      'stages[0].routingRules',
    ]);
    expect(paths({ name: 'p', stages: [stage('a', {}, { routingRules: [null as never] })] })).toEqual([
      'stages[0].routingRules[0]',
    ]);
    expect(() =>
      definePipeline({
        name: 'p',
        stages: [stage('a', {}, { routingRules: [{ condition: 'x', target: 'end' } as never] })],
      }),
    ).not.toThrow();
    expect(() =>
      definePipeline({
        name: 'p',
        stages: [stage('a', {}, { routingRules: [{ condition: 'x', value: undefined, target: 'end' }] })],
      }),
    ).not.toThrow();
    expect(
      paths({
        name: 'p',
        stages: [stage('a', {}, { routingRules: [{ condition: 'x', value: 1, target: 'end', when: 1 } as never] })],
      }),
    ).toEqual(['stages[0].routingRules[0].when']);
  });

  it('rejects requires and after naming unknown stages or the stage itself', () => {
    expect(
      paths({
        name: 'p',
        stages: [
          stage('a', {}, { requires: ['zz'] }),
          stage('b', {}, { after: ['b'], requires: ['a'] }),
          stage('c', {}, { requires: 'a' as never }),
        ],
      }),
    ).toEqual(['stages[0].requires[0]', 'stages[1].after[0]', 'stages[2].requires']);
  });

  it('reports a requires cycle, naming the stages on it', () => {
    const problems = problemsOf({
      name: 'p',
      stages: [
        stage('a', {}, { requires: ['c'] }),
        stage('b', {}, { requires: ['a'] }),
        stage('c', {}, { requires: ['b'] }),
        stage('d', {}, { requires: ['a'] }),
      ],
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toMatch(/^stages\[\d\]\.requires$/);
    expect(problems[0]!.message).toBe('dependency cycle in requires: a -> c -> b -> a (each stage requires the next)');
  });

  it('reports each of two independent requires cycles once', () => {
    const problems = problemsOf({
      name: 'p',
      stages: [
        stage('a', {}, { requires: ['b'] }),
        stage('b', {}, { requires: ['a'] }),
        stage('c', {}, { requires: ['d'] }),
        stage('d', {}, { requires: ['c'] }),
      ],
    });
    expect(problems.filter((p) => p.message.includes('cycle'))).toHaveLength(2);
  });

  it('accepts a DAG of requires without cycles', () => {
    const p = definePipeline({
      name: 'p',
      stages: [
        stage('perception'),
        stage('intent', {}, { requires: ['perception'] }),
        stage('plan', {}, { requires: ['perception', 'intent'], joinStrategy: 'any' }),
      ],
    });
    expect(p.stages[2]!.requires).toEqual(['perception', 'intent']);
  });

  it('rejects a bad join strategy and bad stage timeouts', () => {
    expect(paths({ name: 'p', stages: [stage('a', {}, { joinStrategy: 'some' as never })] })).toEqual([
      'stages[0].joinStrategy',
    ]);
    for (const t of [0, -1, Number.NaN, Infinity, 2 ** 31, '5']) {
      expect(paths({ name: 'p', stages: [stage('a', {}, { timeoutMs: t as number })] })).toEqual([
        'stages[0].timeoutMs',
      ]);
    }
  });

  it('rejects empty or reserved output keys', () => {
    expect(paths({ name: 'p', stages: [stage('a', {}, { outputKey: '' })] })).toEqual(['stages[0].outputKey']);
    expect(paths({ name: 'p', stages: [stage('a', {}, { outputKey: '__proto__' })] })).toEqual(['stages[0].outputKey']);
  });

  it('rejects bounds that are not positive numbers, and accepts any positive one (Infinity: no bound)', () => {
    for (const v of [1, 2.5, 1e9, Infinity]) {
      expect(
        definePipeline({ name: 'p', stages: [stage('a')], maxIterations: v, maxLlmCalls: v, maxAgentHops: v })
          .maxIterations,
      ).toBe(v);
    }
    for (const v of [0, -3, Number.NaN, -Infinity, '3']) {
      expect(paths({ name: 'p', stages: [stage('a')], maxIterations: v, maxLlmCalls: v, maxAgentHops: v })).toEqual([
        'maxIterations',
        'maxLlmCalls',
        'maxAgentHops',
      ]);
    }
  });

  it('rejects edge limits naming unknown stages, repeated, or with maxCount < 1', () => {
    expect(
      paths({
        name: 'p',
        stages: [stage('a'), stage('b')],
        edgeLimits: [
          { from: 'a', to: 'zz', maxCount: 1 },
          { from: 'end', to: 'a', maxCount: 1 },
          { from: 'a', to: 'b', maxCount: 0 },
          { from: 'b', to: 'a', maxCount: 0.5 },
          { from: 'b', to: 'a', maxCount: 2 },
          7,
        ],
      }),
    ).toEqual([
      'edgeLimits[0].to',
      'edgeLimits[1].from',
      'edgeLimits[2].maxCount',
      'edgeLimits[3].maxCount',
      'edgeLimits[4]',
      'edgeLimits[5]',
    ]);
    expect(paths({ name: 'p', stages: [stage('a')], edgeLimits: {} })).toEqual(['edgeLimits']);
  });

  it('rejects unknown resume stages and bad interrupt TTLs', () => {
    expect(
      paths({
        name: 'p',
        stages: [stage('a')],
        clarificationResumeStage: 'b',
        confirmationResumeStage: 'end',
        interruptTtlMs: { clarification: 0, bogus: 5, confirmation: 'x' },
      }),
    ).toEqual([
      'clarificationResumeStage',
      'confirmationResumeStage',
      'interruptTtlMs.clarification',
      'interruptTtlMs.bogus',
      'interruptTtlMs.confirmation',
    ]);
    expect(paths({ name: 'p', stages: [stage('a')], interruptTtlMs: 5 })).toEqual(['interruptTtlMs']);
  });

  it('rejects unknown keys (typos must not pass silently)', () => {
    expect(paths({ name: 'p', stages: [stage('a')], maxIteration: 4 })).toEqual(['maxIteration']);
    expect(paths({ name: 'p', stages: [{ name: 'a', run, default_next: 'end' }] })).toEqual(['stages[0].default_next']);
    expect(
      paths({ name: 'p', stages: [stage('a')], edgeLimits: [{ from: 'a', to: 'a', maxCount: 1, max: 2 }] }),
    ).toEqual(['edgeLimits[0].max']);
  });
});

describe('Pipeline.toMermaid', () => {
  const pipeline = definePipeline({
    name: 'cyclic',
    stages: [
      stage('stage_a', {}, { defaultNext: 'stage_b', errorNext: 'fixer' }),
      stage('stage_b', {}, { defaultNext: 'stage_c' }),
      stage(
        'stage_c',
        {},
        {
          routingRules: [
            { condition: 'verdict', value: 'proceed', target: 'end' },
            { condition: 'verdict', value: 'loop_back', target: 'stage_a' },
            { condition: 'verdict', value: 'ask', target: 'clarification' },
          ],
        },
      ),
      stage('fixer', {}, { requires: ['stage_a'], after: ['stage_b'], defaultNext: 'confirmation' }),
    ],
    edgeLimits: [{ from: 'stage_c', to: 'stage_a', maxCount: 2 }],
  });
  const chart = pipeline.toMermaid();

  it('is a flowchart with every stage, in stage order, starting at the first', () => {
    const lines = chart.split('\n');
    expect(lines[0]).toBe('flowchart TD');
    expect(chart).toContain('s0["stage_a"]');
    expect(chart.indexOf('s0["stage_a"]')).toBeLessThan(chart.indexOf('s3["fixer"]'));
    expect(chart).toContain('start_ --> s0');
  });

  it('draws rules with their condition and value, and the edge limit', () => {
    expect(chart).toContain('s2 -->|"verdict = proceed"| end_');
    expect(chart).toContain('s2 -->|"verdict = loop_back (max 2)"| s0');
    expect(chart).toContain('s2 -->|"verdict = ask"| clarification_');
  });

  it('draws default, error, requires and after edges and the special targets used', () => {
    expect(chart).toContain('s0 --> s1');
    expect(chart).toContain('s2 -->|"default"| end_');
    expect(chart).toContain('s0 -.->|"error"| s3');
    expect(chart).toContain('s0 ==>|requires| s3');
    expect(chart).toContain('s1 -.->|after| s3');
    expect(chart).toContain('end_([end])');
    expect(chart).toContain('clarification_{{clarification}}');
    expect(chart).toContain('confirmation_{{confirmation}}');
  });

  it('escapes labels and renders non-string rule values readably', () => {
    const p = definePipeline({
      name: 'odd',
      stages: [
        stage(
          'say "hi" <b>',
          {},
          {
            routingRules: [
              { condition: 'n', value: -0, target: 'end' },
              { condition: 'o', value: { a: [1, 2] }, target: 'end' },
              { condition: 's', value: 'two words', target: 'end' },
              { condition: 'big', value: 10n, target: 'end' },
              { condition: 'nil', value: null, target: 'end' },
              { condition: 'f', value: run, target: 'end' },
              { condition: 'long', value: { text: 'x'.repeat(100) }, target: 'end' },
              { condition: 'bad', value: { n: 1n }, target: 'end' },
            ],
          },
        ),
      ],
    });
    const text = p.toMermaid();
    expect(text).toContain('s0["say #quot;hi#quot; #lt;b#gt;"]');
    expect(text).toContain('"n = -0"');
    expect(text).toContain('"o = {#quot;a#quot;:[1,2]}"');
    expect(text).toContain('"s = #quot;two words#quot;"');
    expect(text).toContain('"big = 10n"');
    expect(text).toContain('"nil = null"');
    expect(text).toContain('"f = a function"');
    expect(text).toMatch(/"long = \{#quot;text#quot;:#quot;x+\.\.\."/);
    expect(text).toContain('"bad = {...}"');
    expect(text).not.toContain('\n  end_([end])\n  end_([end])');
  });
});
