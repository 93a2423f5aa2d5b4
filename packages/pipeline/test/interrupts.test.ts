import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  Envelope,
  INTERRUPT_KINDS,
  isInterruptKind,
  PipelineStateError,
  PipelineUsageError,
  type InterruptResponse,
  type StageConfig,
  type StageContext,
} from '@signalyard/pipeline';
import { collect, rejectsCode, runtimeOf, stage, types } from './support.js';

/** A stage asking a question unless it has an answer. */
function asker(name: string, rest: Partial<StageConfig> = {}): StageConfig {
  return {
    name,
    run: (ctx: StageContext) =>
      ctx.response?.text === undefined ? { question: 'Which one?' } : { answer: ctx.response.text },
    routingRules: [{ condition: 'question', value: 'Which one?', target: 'clarification' }],
    ...rest,
  };
}

describe('interrupts from routing targets', () => {
  it('routing to clarification pauses the run with the output as payload', async () => {
    const runtime = runtimeOf({
      stages: [
        stage('intake', { got: 1 }, { defaultNext: 'ask' }),
        asker('ask', { defaultNext: 'done' }),
        stage('done'),
      ],
    });
    const env = await runtime.run('x');
    expect(env).toMatchObject({ terminated: false, currentStage: 'ask', agentHops: 2 });
    expect(env.terminalReason).toBeUndefined();
    expect(env.interrupt).toMatchObject({ kind: 'clarification', stage: 'ask', payload: { question: 'Which one?' } });
    expect(env.interrupt!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(env.interrupt!.createdAt).toISOString()).toBe(env.interrupt!.createdAt);
    expect(env.interrupt!.expiresAt).toBeUndefined();
    expect(env.outputs.ask).toEqual({ question: 'Which one?' });
    expect(env.trace.at(-1)!.next).toBe('clarification');
  });

  it('routing to confirmation pauses the run', async () => {
    const env = await runtimeOf({ stages: [stage('plan', { action: 'delete' }, { defaultNext: 'confirmation' })] }).run(
      null,
    );
    expect(env.interrupt).toMatchObject({ kind: 'confirmation', stage: 'plan', payload: { action: 'delete' } });
    expect(env.terminated).toBe(false);
  });

  it('the stream yields the interrupt, then end', async () => {
    const events = await collect(runtimeOf({ stages: [asker('ask')] }).stream(null));
    expect(types(events)).toEqual(['stage_start:ask', 'stage_end:ask', 'interrupt', 'end']);
    const [, , interrupt, end] = events;
    expect(interrupt?.type === 'interrupt' && interrupt.interrupt.kind).toBe('clarification');
    expect(end?.type === 'end' && end.envelope.interrupt).toEqual(
      interrupt?.type === 'interrupt' ? interrupt.interrupt : undefined,
    );
  });
});

describe('interrupts from ctx.interrupt', () => {
  it('pauses the run at the raising stage, without storing its output', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'review',
          run: (ctx) => {
            if (ctx.response === undefined) ctx.interrupt('agent_review', { draft: 'v1' });
            return { reviewed: ctx.response?.decision };
          },
        },
      ],
    });
    const env = await runtime.run(null);
    expect(env.interrupt).toMatchObject({ kind: 'agent_review', stage: 'review', payload: { draft: 'v1' } });
    expect(env.outputs).toEqual({});
    expect(env.trace.map((t) => t.next)).toEqual(['agent_review']);
    expect(env.completedStages).toEqual([]);
    expect(env.errors).toEqual([]);
  });

  it('pauses the run even if the stage catches the throw', async () => {
    let caught: unknown;
    const env = await runtimeOf({
      stages: [
        {
          name: 'a',
          run: (ctx) => {
            try {
              ctx.interrupt('checkpoint');
            } catch (error) {
              caught = error;
            }
            return { carried: 'on' };
          },
        },
      ],
    }).run(null);
    expect(caught).toMatchObject({ code: 'PIPELINE_INTERRUPTED' });
    expect(env.interrupt).toMatchObject({ kind: 'checkpoint', stage: 'a' });
    expect(env.interrupt).not.toHaveProperty('payload');
  });

  it('accepts every interrupt kind', async () => {
    expect(INTERRUPT_KINDS).toHaveLength(7);
    for (const kind of INTERRUPT_KINDS) {
      expect(isInterruptKind(kind)).toBe(true);
      const env = await runtimeOf({ stages: [{ name: 'a', run: (ctx) => ctx.interrupt(kind) }] }).run(null);
      expect(env.interrupt?.kind).toBe(kind);
    }
    expect(isInterruptKind('question')).toBe(false);
  });

  it('an unknown kind throws PIPELINE_ARGUMENT_INVALID inside the stage, failing it', async () => {
    let error: unknown;
    const env = await runtimeOf({
      stages: [
        {
          name: 'a',
          run: (ctx) => {
            try {
              ctx.interrupt('question' as never);
            } catch (e) {
              error = e;
              throw e;
            }
          },
        },
      ],
    }).run(null);
    expect(PipelineUsageError.isInstance(error)).toBe(true);
    expect(env.interrupt).toBeUndefined();
    expect(env.terminalReason).toBe('stage_failed');
    expect(env.errors[0]).toMatchObject({ code: 'PIPELINE_ARGUMENT_INVALID' });
  });
});

describe('resume', () => {
  const reviewLoop = (extra: { clarificationResumeStage?: string } = {}) =>
    runtimeOf({
      maxIterations: 5,
      ...extra,
      stages: [
        stage('intake', { topic: 'trains' }, { defaultNext: 'draft' }),
        {
          name: 'draft',
          run: (ctx) => ({ text: `about ${(ctx.outputs.intake as { topic: string }).topic}` }),
          defaultNext: 'ask',
        },
        asker('ask', { defaultNext: 'publish' }),
        { name: 'publish', run: (ctx) => ({ published: (ctx.outputs.ask as { answer?: string }).answer }) },
      ],
    });

  it('regression: resume does not restart from the first stage (outputs, counters and trace kept, continuing at the raising stage)', async () => {
    const runtime = reviewLoop();
    const paused = await runtime.run('go');
    expect(paused.currentStage).toBe('ask');
    const done = await runtime.resume(paused, { text: 'steam trains' });
    expect(done.id).toBe(paused.id);
    expect(done.trace.map((t) => t.stage)).toEqual(['intake', 'draft', 'ask', 'ask', 'publish']);
    expect(done.outputs).toEqual({
      intake: { topic: 'trains' },
      draft: { text: 'about trains' },
      ask: { answer: 'steam trains' },
      publish: { published: 'steam trains' },
    });
    expect(done).toMatchObject({ terminated: true, terminalReason: 'completed', agentHops: 5, iteration: 0 });
    expect(done.edgeTraversals).toEqual({ 'intake->draft': 1, 'draft->ask': 1, 'ask->publish': 1 });
    expect(done.trace.slice(0, 3)).toEqual(paused.trace);
    expect(done.interrupt).toBeUndefined();
    expect(done.resolvedInterrupts).toHaveLength(1);
    expect(done.resolvedInterrupts[0]).toMatchObject({ ...paused.interrupt, response: { text: 'steam trains' } });
    expect(Date.parse(done.resolvedInterrupts[0]!.resolvedAt)).not.toBeNaN();
  });

  it('regression: resume at a configured earlier stage is a transition counted as an iteration', async () => {
    const runtime = reviewLoop({ clarificationResumeStage: 'draft' });
    const paused = await runtime.run('go');
    const again = await runtime.resume(paused, { text: 'diesel' });
    // draft runs again (seeing the answer), then ask, which has no answer of its own, asks again
    expect(again.trace.map((t) => t.stage)).toEqual(['intake', 'draft', 'ask', 'draft', 'ask']);
    expect(again.iteration).toBe(1);
    expect(again.edgeTraversals['ask->draft']).toBe(1);
    expect(again.agentHops).toBe(5);
    expect(again.interrupt?.kind).toBe('clarification');
  });

  it('the resumed stage sees the response as ctx.response; later stages do not', async () => {
    const seen: [string, InterruptResponse | undefined][] = [];
    const record = (name: string, rest: Partial<StageConfig>): StageConfig => ({
      name,
      run: (ctx) => (seen.push([name, ctx.response]), {}),
      ...rest,
    });
    const runtime = runtimeOf({
      clarificationResumeStage: 'b',
      stages: [
        stage('a', { q: 1 }, { defaultNext: 'clarification' }),
        record('b', { defaultNext: 'c' }),
        record('c', {}),
      ],
    });
    const done = await runtime.resume(await runtime.run(null), { text: 'answer', data: { n: 1 } });
    expect(seen).toEqual([
      ['b', { text: 'answer', data: { n: 1 } }],
      ['c', undefined],
    ]);
    expect(done.terminalReason).toBe('completed');
    // a to b is not a loop-back: no iteration
    expect(done.iteration).toBe(0);
    expect(done.edgeTraversals).toEqual({ 'a->b': 1, 'b->c': 1 });
  });

  it('returns a new envelope and leaves the argument unchanged', async () => {
    const runtime = reviewLoop();
    const paused = await runtime.run('go');
    const before = paused.toJSON();
    const done = await runtime.resume(paused, { text: 'x' });
    expect(done).not.toBe(paused);
    expect(paused.toJSON()).toEqual(before);
    expect(Object.isFrozen(paused.trace)).toBe(true);
    expect(paused.interrupt).toBeDefined();
  });

  it('resumes an envelope rebuilt from JSON', async () => {
    const runtime = reviewLoop();
    const paused = await runtime.run('go');
    const stored = Envelope.fromJSON(JSON.parse(JSON.stringify(paused)));
    const done = await runtime.resume(stored, { text: 'rebuilt' });
    expect(done.outputs.publish).toEqual({ published: 'rebuilt' });
    expect(done.agentHops).toBe(5);
  });

  it('can pause and resume several times, accumulating resolved interrupts', async () => {
    let asks = 0;
    const runtime = runtimeOf({
      maxAgentHops: 50,
      stages: [
        {
          name: 'a',
          run: (ctx) => (++asks <= 2 ? ctx.interrupt('clarification', { n: asks }) : { final: ctx.response?.text }),
        },
      ],
    });
    let env = await runtime.run(null);
    env = await runtime.resume(env, { text: 'one' });
    expect(env.interrupt?.payload).toEqual({ n: 2 });
    env = await runtime.resume(env, { text: 'two' });
    expect(env.terminalReason).toBe('completed');
    expect(env.resolvedInterrupts.map((r) => r.response.text)).toEqual(['one', 'two']);
    expect(env.outputs.a).toEqual({ final: 'two' });
  });

  it('a configured resume transition is refused by its edge limit', async () => {
    const runtime = runtimeOf({
      clarificationResumeStage: 'a',
      stages: [stage('a', {}, { defaultNext: 'b' }), stage('b', { q: 1 }, { defaultNext: 'clarification' })],
      edgeLimits: [{ from: 'b', to: 'a', maxCount: 1 }],
      maxIterations: 10,
    });
    let env = await runtime.run(null);
    env = await runtime.resume(env, { text: '1' });
    expect(env.interrupt).toBeDefined();
    env = await runtime.resume(env, { text: '2' });
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'max_loop_exceeded',
      terminationReason: 'edge limit exceeded: b->a',
    });
    expect(env.resolvedInterrupts).toHaveLength(2);
  });

  it('a configured resume transition is refused by maxIterations', async () => {
    const runtime = runtimeOf({
      clarificationResumeStage: 'a',
      maxIterations: 1,
      stages: [stage('a', {}, { defaultNext: 'b' }), stage('b', { q: 1 }, { defaultNext: 'clarification' })],
    });
    let env = await runtime.run(null);
    env = await runtime.resume(env, { text: '1' });
    env = await runtime.resume(env, { text: '2' });
    expect(env).toMatchObject({ terminalReason: 'max_iterations_exceeded', iteration: 1 });
  });

  it('resuming at the raising stage is refused when the hop bound is spent', async () => {
    const runtime = runtimeOf({ maxAgentHops: 1, stages: [asker('ask')] });
    const paused = await runtime.run(null);
    const env = await runtime.resume(paused, { text: 'x' });
    expect(env).toMatchObject({ terminated: true, terminalReason: 'max_agent_hops_exceeded', agentHops: 1 });
  });

  it('other interrupt kinds resume at the raising stage even with resume stages configured', async () => {
    const runtime = runtimeOf({
      clarificationResumeStage: 'a',
      confirmationResumeStage: 'a',
      stages: [
        stage('a', {}, { defaultNext: 'b' }),
        { name: 'b', run: (ctx) => (ctx.response === undefined ? ctx.interrupt('checkpoint') : { resumed: true }) },
      ],
    });
    const env = await runtime.resume(await runtime.run(null), { decision: 'go' });
    expect(env.trace.map((t) => t.stage)).toEqual(['a', 'b', 'b']);
    expect(env.outputs.b).toEqual({ resumed: true });
  });

  it('the resume stream yields the remaining stages and end', async () => {
    const runtime = reviewLoop();
    const events = await collect(runtime.resumeStream(await runtime.run(null), { text: 'x' }));
    expect(types(events)).toEqual([
      'stage_start:ask',
      'stage_end:ask',
      'stage_start:publish',
      'stage_end:publish',
      'end',
    ]);
  });
});

describe('confirmation', () => {
  const confirmRuntime = (resumeAt?: string) =>
    runtimeOf({
      ...(resumeAt === undefined ? {} : { confirmationResumeStage: resumeAt }),
      stages: [
        stage('plan', { action: 'delete everything' }, { defaultNext: 'gate' }),
        {
          name: 'gate',
          run: (ctx) => (ctx.response?.approved === true ? { approved: true } : { confirm: true }),
          routingRules: [{ condition: 'confirm', value: true, target: 'confirmation' }],
          defaultNext: 'execute',
        },
        stage('execute', { done: true }),
      ],
    });

  it('approved: continues at the raising stage by default', async () => {
    const runtime = confirmRuntime();
    const env = await runtime.resume(await runtime.run(null), { approved: true });
    expect(env.terminalReason).toBe('completed');
    expect(env.trace.map((t) => t.stage)).toEqual(['plan', 'gate', 'gate', 'execute']);
  });

  it('approved: continues at confirmationResumeStage when configured', async () => {
    const runtime = confirmRuntime('execute');
    const env = await runtime.resume(await runtime.run(null), { approved: true });
    expect(env.trace.map((t) => t.stage)).toEqual(['plan', 'gate', 'execute']);
    expect(env.edgeTraversals['gate->execute']).toBe(1);
  });

  it.each([
    ['approved: false', { approved: false }],
    ['approved missing', { text: 'sure' }],
  ])('%s: the run ends user_denied without running anything', async (_what, response) => {
    const runtime = confirmRuntime();
    const paused = await runtime.run(null);
    const events = await collect(runtime.resumeStream(paused, response));
    expect(types(events)).toEqual(['end']);
    const env = events[0]!.type === 'end' ? events[0]!.envelope : undefined;
    expect(env).toMatchObject({ terminated: true, terminalReason: 'user_denied', currentStage: 'gate', agentHops: 2 });
    expect(env!.interrupt).toBeUndefined();
    expect(env!.resolvedInterrupts[0]!.response).toEqual(response);
    expect(env!.terminationReason).toContain('denied');
  });
});

describe('resume errors', () => {
  it('NO_PENDING_INTERRUPT for a completed or terminated envelope', async () => {
    const runtime = runtimeOf({ stages: [stage('a')] });
    const done = await runtime.run(null);
    const e = await rejectsCode(runtime.resume(done, { text: 'x' }), 'NO_PENDING_INTERRUPT');
    expect(PipelineStateError.isInstance(e)).toBe(true);
    expect(e).toMatchObject({ envelopeId: done.id });
    expect(e.message).toContain('completed');
    await rejectsCode(collect(runtime.resumeStream(done, {})), 'NO_PENDING_INTERRUPT');
  });

  describe('with fake timers', () => {
    beforeEach(() => {
      vi.useFakeTimers();
      vi.setSystemTime(new Date('2026-01-01T00:00:00.000Z'));
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('INTERRUPT_EXPIRED once createdAt + interruptTtlMs[kind] has passed; the envelope stays paused', async () => {
      const runtime = runtimeOf({ interruptTtlMs: { clarification: 60_000 }, stages: [asker('ask')] });
      const paused = await runtime.run(null);
      expect(paused.interrupt!.expiresAt).toBe('2026-01-01T00:01:00.000Z');
      vi.setSystemTime(new Date('2026-01-01T00:00:59.999Z'));
      const ok = await runtime.resume(paused, { text: 'in time' });
      expect(ok.terminalReason).toBe('completed');
      vi.setSystemTime(new Date('2026-01-01T00:01:00.000Z'));
      const e = await rejectsCode(runtime.resume(paused, { text: 'late' }), 'INTERRUPT_EXPIRED');
      expect(e).toMatchObject({ interruptId: paused.interrupt!.id, expiresAt: '2026-01-01T00:01:00.000Z' });
      expect(paused.interrupt).toBeDefined();
    });

    it('a TTL applies only to its own kind', async () => {
      const runtime = runtimeOf({ interruptTtlMs: { confirmation: 10 }, stages: [asker('ask')] });
      const paused = await runtime.run(null);
      expect(paused.interrupt!.expiresAt).toBeUndefined();
      vi.setSystemTime(new Date('2030-01-01T00:00:00.000Z'));
      expect((await runtime.resume(paused, { text: 'years later' })).terminalReason).toBe('completed');
    });
  });

  it('PIPELINE_ENVELOPE_INVALID for something that is not an Envelope', async () => {
    const runtime = runtimeOf({ stages: [stage('a')] });
    const paused = await runtimeOf({ stages: [asker('ask')] }).run(null);
    await rejectsCode(runtime.resume(paused.toJSON() as never, { text: 'x' }), 'PIPELINE_ENVELOPE_INVALID');
    await rejectsCode(runtime.resume(null as never, { text: 'x' }), 'PIPELINE_ENVELOPE_INVALID');
  });

  it('PIPELINE_ENVELOPE_INVALID for an envelope whose interrupt names a stage this pipeline lacks', async () => {
    const paused = await runtimeOf({ stages: [asker('ask')] }).run(null);
    const e = await rejectsCode(
      runtimeOf({ name: 'other', stages: [stage('a')] }).resume(paused, { text: 'x' }),
      'PIPELINE_ENVELOPE_INVALID',
    );
    expect(e.message).toContain('"ask"');
  });

  it('an envelope of a DAG-mode run resumes in DAG mode (see dag.test.ts)', async () => {
    const paused = await runtimeOf({ stages: [asker('ask')] }).run(null);
    const dag = Envelope.fromJSON({ ...paused.toJSON(), mode: 'parallel' });
    const env = await runtimeOf({ stages: [asker('ask')] }).resume(dag, { text: 'x' });
    expect(env).toMatchObject({ mode: 'parallel', terminalReason: 'completed', outputs: { ask: { answer: 'x' } } });
  });

  it.each([
    ['not an object', 'yes'],
    ['null', null],
    ['approved not a boolean', { approved: 'yes' }],
    ['text not a string', { text: 5 }],
    ['decision not a string', { decision: true }],
  ])('PIPELINE_ARGUMENT_INVALID for a response that is %s', async (_what, response) => {
    const runtime = runtimeOf({ stages: [asker('ask')] });
    const paused = await runtime.run(null);
    await rejectsCode(runtime.resume(paused, response as never), 'PIPELINE_ARGUMENT_INVALID');
  });

  it('PIPELINE_ARGUMENT_INVALID for unknown resume options (mode is a run option)', async () => {
    const runtime = runtimeOf({ stages: [asker('ask')] });
    const paused = await runtime.run(null);
    await rejectsCode(runtime.resume(paused, {}, { mode: 'sequential' } as never), 'PIPELINE_ARGUMENT_INVALID');
  });
});
