// Envelope traces are capped: the most recent `maxTraceEntries` (default 1,000) are kept and
// `droppedTraceEntries` counts the others, so a long run cannot grow its envelope without bound.
import { describe, expect, it } from 'vitest';
import { definePipeline, Envelope, PipelineRuntime, type PipelineRuntimeOptions } from '@signalyard/pipeline';
import { rejectsCode, throwsCode } from './support.js';

/** One stage looping on itself `hops` times per run (pausing on a clarification after each `hops` with `pause`). */
function looping(hops: number, options: PipelineRuntimeOptions = {}, pause = false) {
  let n = 0;
  const pipeline = definePipeline({
    name: 'looping',
    maxAgentHops: Infinity,
    stages: [
      {
        name: 'a',
        run: () => ({ again: ++n % hops !== 0 }),
        routingRules: [{ condition: 'again', value: true, target: 'a' }],
        defaultNext: pause ? 'clarification' : 'end',
      },
    ],
  });
  return new PipelineRuntime(pipeline, options);
}

describe('trace cap', () => {
  it('keeps the most recent 1,000 entries by default and counts the dropped ones', async () => {
    const runtime = looping(2500);
    expect(runtime.maxTraceEntries).toBe(1000);
    const env = await runtime.run(null);
    expect(env.agentHops).toBe(2500);
    expect(env.trace).toHaveLength(1000);
    expect(env.droppedTraceEntries).toBe(1500);
    expect(env.trace.at(-1)!.next).toBe('end');
    expect(Object.isFrozen(env.trace)).toBe(true);
  });

  it('takes its cap from the maxTraceEntries option', async () => {
    const env = await looping(2500, { maxTraceEntries: 10 }).run(null);
    expect(env.trace).toHaveLength(10);
    expect(env.droppedTraceEntries).toBe(2490);
  });

  it('keeps no trace with maxTraceEntries 0, and every entry with Infinity', async () => {
    const none = await looping(300, { maxTraceEntries: 0 }).run(null);
    expect(none.trace).toEqual([]);
    expect(none.droppedTraceEntries).toBe(300);
    const all = await looping(2500, { maxTraceEntries: Infinity }).run(null);
    expect(all.trace).toHaveLength(2500);
    expect(all.droppedTraceEntries).toBeUndefined();
    expect(Object.keys(all.toJSON())).not.toContain('droppedTraceEntries');
  });

  it('a run within the cap drops nothing and has no droppedTraceEntries', async () => {
    const env = await looping(5).run(null);
    expect(env.trace).toHaveLength(5);
    expect(env.droppedTraceEntries).toBeUndefined();
  });

  it('the count survives JSON and resume, which goes on counting', async () => {
    const runtime = looping(1500, { maxTraceEntries: 1000 }, true);
    const paused = await runtime.run(null);
    expect(paused.interrupt?.kind).toBe('clarification');
    expect(paused.droppedTraceEntries).toBe(500);
    const stored = Envelope.fromJSON(JSON.parse(JSON.stringify(paused)));
    expect(stored).toEqual(paused);
    expect(stored.toJSON().droppedTraceEntries).toBe(500);
    const again = await runtime.resume(stored, { text: 'go on' });
    expect(again.agentHops).toBe(3000);
    expect(again.trace).toHaveLength(1000);
    expect(again.droppedTraceEntries).toBe(2000);
  });

  it('caps DAG runs and the envelope snapshot a stage sees', async () => {
    const seen: number[] = [];
    const pipeline = definePipeline({
      name: 'wide',
      maxAgentHops: 100,
      stages: [
        ...Array.from({ length: 30 }, (_, i) => ({ name: `s${i}`, run: () => ({}) })),
        { name: 'last', after: ['s29'], run: (ctx) => (seen.push(ctx.envelope.trace.length), {}) },
      ],
    });
    const env = await new PipelineRuntime(pipeline, { maxTraceEntries: 8 }).run(null, { mode: 'parallel' });
    expect(env.trace).toHaveLength(8);
    expect(env.droppedTraceEntries).toBe(23);
    expect(seen).toEqual([8]);
  });

  it.each([-1, 1.5, Number.NaN, '10', null])('rejects maxTraceEntries %s with PIPELINE_ARGUMENT_INVALID', (value) => {
    const pipeline = definePipeline({ name: 'p', stages: [{ name: 'a', run: () => ({}) }] });
    const error = throwsCode(
      () => new PipelineRuntime(pipeline, { maxTraceEntries: value as number }),
      'PIPELINE_ARGUMENT_INVALID',
    );
    expect(error).toMatchObject({ argument: 'options.maxTraceEntries' });
    expect(error.message).toContain('maxTraceEntries');
  });

  it('Envelope.fromJSON rejects a droppedTraceEntries that is not a count', async () => {
    const json = { ...(await looping(3).run(null)).toJSON(), droppedTraceEntries: -2 };
    await rejectsCode(
      Promise.resolve().then(() => Envelope.fromJSON(json)),
      'PIPELINE_ENVELOPE_INVALID',
    );
  });
});
