import { definePipeline, PipelineRuntime } from '@signalyard/pipeline';
import { describe, expect, it } from 'vitest';

describe('StageContext.outputs', () => {
  it('is a read-only view: a stage cannot write into the run (sequential and DAG)', async () => {
    const pipeline = definePipeline({
      name: 'p',
      stages: [
        { name: 'a', run: () => ({ x: 1 }), defaultNext: 'b' },
        {
          name: 'b',
          run: (ctx) => {
            expect(Object.isFrozen(ctx.outputs)).toBe(true);
            expect(() => {
              (ctx.outputs as Record<string, unknown>).hack = 1;
            }).toThrow(TypeError);
            return { seen: ctx.outputs.a };
          },
        },
      ],
    });
    const env = await new PipelineRuntime(pipeline).run(null);
    expect(env.outputs).toEqual({ a: { x: 1 }, b: { seen: { x: 1 } } });
    const dag = await new PipelineRuntime(pipeline).run(null, { mode: 'parallel' });
    expect(Object.keys(dag.outputs).sort()).toEqual(['a', 'b']);
  });

  it('shows the outputs so far, each stage seeing those before it', async () => {
    const seen: string[][] = [];
    const pipeline = definePipeline({
      name: 'p',
      stages: ['a', 'b', 'c'].map((name, i, all) => ({
        name,
        run: (ctx) => {
          seen.push(Object.keys(ctx.outputs));
          return { i };
        },
        ...(i < all.length - 1 ? { defaultNext: all[i + 1] } : {}),
      })),
    });
    await new PipelineRuntime(pipeline).run(null);
    expect(seen).toEqual([[], ['a'], ['a', 'b']]);
  });
});

describe('routing rules with an undefined value', () => {
  it('are accepted and never match, not even an output key set to undefined', async () => {
    const pipeline = definePipeline({
      name: 'p',
      stages: [
        {
          name: 'a',
          run: () => ({ k: undefined }),
          routingRules: [{ condition: 'k', value: undefined, target: 'b' }],
          defaultNext: 'end',
        },
        { name: 'b', run: () => ({}) },
      ],
    });
    const env = await new PipelineRuntime(pipeline).run(null);
    expect(env.trace.map((t) => t.stage)).toEqual(['a']);
    expect(env.terminalReason).toBe('completed');
  });
});

describe('bounds', () => {
  it('Infinity means no bound', async () => {
    let n = 0;
    const pipeline = definePipeline({
      name: 'p',
      maxAgentHops: Infinity,
      maxIterations: Infinity,
      stages: [
        {
          name: 'a',
          run: () => ({ again: ++n < 50 }),
          routingRules: [{ condition: 'again', value: true, target: 'a' }],
        },
      ],
    });
    const env = await new PipelineRuntime(pipeline).run(null);
    expect(env.agentHops).toBe(50);
    expect(env.terminalReason).toBe('completed');
  });
});
