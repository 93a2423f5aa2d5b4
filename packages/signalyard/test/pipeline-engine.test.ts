import { MemoryCheckpointStore, SignalKind, signal, type RunnerEvent } from '@signalyard/core';
import { definePipeline, Envelope, type Interrupt } from '@signalyard/pipeline';
import { createRunner, defaultInterruptResponse, pipelineEngine } from 'signalyard';
import { describe, expect, it } from 'vitest';

const dm = (text: string) => ({ channel: 'telegram', peer: { kind: 'dm' as const, id: '7' }, text });

/** plan → (confirmation) → execute; `execute` records whether it ran. */
function confirmPipeline() {
  return definePipeline({
    name: 'refund',
    stages: [
      {
        name: 'plan',
        run: (ctx) => ({ amount: 42, request: (ctx.input as { text: string }).text }),
        defaultNext: 'confirmation',
      },
      { name: 'execute', run: (ctx) => ({ refunded: (ctx.outputs.plan as { amount: number }).amount }) },
    ],
    confirmationResumeStage: 'execute',
  });
}

function clarifyPipeline() {
  return definePipeline({
    name: 'clarify',
    stages: [
      {
        name: 'ask',
        run: (ctx) =>
          ctx.response === undefined
            ? ctx.interrupt('clarification', { question: 'Which order?' })
            : { order: ctx.response.text },
        defaultNext: 'answer',
      },
      { name: 'answer', run: (ctx) => ({ reply: `looking up ${(ctx.outputs.ask as { order: string }).order}` }) },
    ],
  });
}

describe('pipelineEngine', () => {
  it('a confirmation interrupt pauses the turn, survives a runner restart, and "yes" completes the run', async () => {
    const store = new MemoryCheckpointStore();
    const agents = [{ id: 'refunds', engine: pipelineEngine(confirmPipeline()) }];
    const first = createRunner({ agents, store });
    const paused = await first.handle(dm('refund my order'));
    expect(paused.status).toBe('paused');
    const env = paused.output as Envelope;
    expect(env.interrupt?.kind).toBe('confirmation');
    expect(env.terminated).toBe(false);
    await first.close();

    const second = createRunner({ agents, store });
    const view = await second.session(paused.sessionKey);
    expect(Envelope.fromJSON(view?.engineState).interrupt?.kind).toBe('confirmation');
    const done = await second.handle(dm('  YES '));
    expect(done.status).toBe('completed');
    const finished = done.output as Envelope;
    expect(finished.terminalReason).toBe('completed');
    expect(finished.outputs).toMatchObject({
      plan: { amount: 42, request: 'refund my order' },
      execute: { refunded: 42 },
    });
    expect(finished.resolvedInterrupts[0]?.response).toEqual({ approved: true });
    expect((await second.session(done.sessionKey))?.engineState).toBeUndefined();
    await second.close();
  });

  it('"no" to a confirmation paused across a runner restart ends the run user_denied and clears the paused state', async () => {
    const store = new MemoryCheckpointStore();
    const agents = [{ id: 'refunds', engine: pipelineEngine(confirmPipeline()) }];
    const before = createRunner({ agents, store });
    expect((await before.handle(dm('refund'))).status).toBe('paused');
    await before.close();
    const runner = createRunner({ agents, store });
    const denied = await runner.handle(dm('no'));
    expect(denied.status).toBe('completed');
    expect((denied.output as Envelope).terminalReason).toBe('user_denied');
    expect((await runner.session(denied.sessionKey))?.engineState).toBeUndefined();
    const again = await runner.handle(dm('refund again'));
    expect(again.status).toBe('paused');
    expect((again.output as Envelope).resolvedInterrupts).toEqual([]);
    await runner.close();
  });

  it('a clarification is answered by free text and the answer reaches the stage', async () => {
    const runner = createRunner({ agents: [{ id: 'support', engine: pipelineEngine(clarifyPipeline()) }] });
    const q = await runner.handle(dm('where is my order?'));
    expect(q.status).toBe('paused');
    expect((q.output as Envelope).interrupt?.payload).toEqual({ question: 'Which order?' });
    const a = await runner.handle(dm('A-1001'));
    expect(a.status).toBe('completed');
    expect((a.output as Envelope).outputs.answer).toEqual({ reply: 'looking up A-1001' });
    const view = await runner.session(a.sessionKey);
    expect(view?.history.map((m) => [m.role, m.content])).toEqual([
      ['user', 'where is my order?'],
      ['assistant', JSON.stringify({ question: 'Which order?' })],
      ['user', 'A-1001'],
      ['assistant', JSON.stringify({ reply: 'looking up A-1001' })],
    ]);
    await runner.close();
  });

  it('starts runs with input { text, sessionKey } and forwards pipeline events as engine_events', async () => {
    const seen: unknown[] = [];
    const pipeline = definePipeline({
      name: 'echo',
      stages: [
        {
          name: 'echo',
          run: (ctx) => {
            seen.push(ctx.input);
            return { ok: true };
          },
        },
      ],
    });
    const runner = createRunner({ agents: [{ id: 'main', engine: pipelineEngine(pipeline) }] });
    const events: RunnerEvent[] = [];
    runner.on((e) => events.push(e));
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(seen).toEqual([{ text: 'hi', sessionKey: outcome.sessionKey }]);
    const forwarded = events.flatMap((e) => (e.type === 'engine_event' ? [e.event.type] : []));
    expect(forwarded).toEqual(['stage_start', 'stage_end']);
    await runner.close();
  });

  it('uses custom toResponse and render', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: pipelineEngine(confirmPipeline(), {
            toResponse: (text) => ({ approved: text === 'sí' }),
            render: (env) =>
              env.interrupt === undefined ? `done: ${env.terminalReason ?? '?'}` : `confirm ${env.interrupt.kind}?`,
          }),
        },
      ],
    });
    const p = await runner.handle(dm('x'));
    expect((await runner.session(p.sessionKey))?.history.at(-1)?.content).toBe('confirm confirmation?');
    const d = await runner.handle(dm('sí'));
    expect((d.output as Envelope).terminalReason).toBe('completed');
    expect((await runner.session(d.sessionKey))?.history.at(-1)?.content).toBe('done: completed');
    await runner.close();
  });

  it('fails the turn for a signal without text', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: pipelineEngine(clarifyPipeline()),
          routes: [{ kind: SignalKind.Timer, action: { type: 'continue' } }],
        },
      ],
    });
    const o = await runner.dispatch('agent:main:main', signal(SignalKind.Timer, { n: 1 }));
    expect(o.status).toBe('failed');
    expect(o.error?.code).toBe('ENGINE_FAILED');
    await runner.close();
  });

  it("stamps the pipeline's times with the runner's clock, or with its own clock option", async () => {
    const at = (iso: string) => ({ now: () => Date.parse(iso) });
    const runnerClock = at('2030-01-02T03:04:05.000Z');
    const runner = createRunner({
      agents: [{ id: 'main', engine: pipelineEngine(clarifyPipeline()) }],
      clock: runnerClock,
    });
    const paused = (await runner.handle(dm('where is my order?'))).output as Envelope;
    expect(paused.interrupt?.createdAt).toBe('2030-01-02T03:04:05.000Z');
    expect(paused.trace.map((t) => [t.startedAt, t.endedAt])).toEqual([
      ['2030-01-02T03:04:05.000Z', '2030-01-02T03:04:05.000Z'],
    ]);
    await runner.close();

    const own = pipelineEngine(clarifyPipeline(), { clock: at('2031-05-06T07:08:09.000Z') });
    const overridden = createRunner({ agents: [{ id: 'main', engine: own }], clock: runnerClock });
    const stamped = (await overridden.handle(dm('where is my order?'))).output as Envelope;
    expect(stamped.interrupt?.createdAt).toBe('2031-05-06T07:08:09.000Z');
    await overridden.close();
  });

  it('rejects a clock option that is no clock when the engine is made', () => {
    expect(() => pipelineEngine(clarifyPipeline(), { clock: { now: 'soon' } as never })).toThrow(
      expect.objectContaining({
        code: 'PIPELINE_ARGUMENT_INVALID',
        message: expect.stringMatching(/Invalid clock.*"soon"/),
      }),
    );
  });
});

describe('defaultInterruptResponse', () => {
  const confirmation: Interrupt = { id: 'i', kind: 'confirmation', stage: 's', createdAt: '2026-01-01T00:00:00.000Z' };
  const clarification: Interrupt = { ...confirmation, kind: 'clarification' };
  it.each(['y', 'yes', 'ok', 'approve', 'approved', 'confirm', ' YES ', 'Ok'])('approves %j', (text) => {
    expect(defaultInterruptResponse(text, confirmation)).toEqual({ approved: true });
  });
  it.each(['no', 'n', '', 'yes please', 'nope'])('does not approve %j', (text) => {
    expect(defaultInterruptResponse(text, confirmation)).toEqual({ approved: false });
  });
  it('answers a clarification (and any other kind) with the text', () => {
    expect(defaultInterruptResponse('the blue one', clarification)).toEqual({ text: 'the blue one' });
    expect(defaultInterruptResponse('go', { ...confirmation, kind: 'checkpoint' })).toEqual({ text: 'go' });
  });
});
