import { describe, expect, it } from 'vitest';
import { SignalKind, signal, type RunnerEvent, type TurnEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { definePipeline } from '@signalyard/pipeline';
import { collect, deferred, rejectsCode } from '@signalyard/test-utils';
import { createRunner, pipelineEngine, type EngineFn, type TurnContext } from 'signalyard';
import { MAIN } from './support.js';

/** An engine that streams its reply in three pieces when the turn is streamed. */
const chunky: EngineFn = async (ctx) => {
  const reply = ['Hel', 'lo ', 'there'];
  for (const piece of reply) ctx.emitText(piece, { crewAgentId: 'greeter' });
  ctx.emit({ type: 'handoff', from: 'a', to: 'b' });
  return { output: 'done', messages: [{ role: 'assistant', content: reply.join('') }] };
};

const runnerWith = (engine: EngineFn) => createRunner({ agents: [{ id: 'main', engine }] });

describe('Runner.stream: one turn as a stream', () => {
  it('yields routed, the text deltas with their source, engine events, and the outcome last', async () => {
    const runner = runnerWith(chunky);
    const turn = runner.stream({ channel: 'cli', text: 'hi' });
    const events: TurnEvent[] = await collect(turn);
    expect(events.map((e) => e.type)).toEqual([
      'routed',
      'text_delta',
      'text_delta',
      'text_delta',
      'engine_event',
      'outcome',
    ]);
    expect(events[0]).toMatchObject({
      type: 'routed',
      sessionKey: MAIN,
      agentId: 'main',
      action: { type: 'continue' },
    });
    expect(events[1]).toEqual({
      type: 'text_delta',
      agentId: 'main',
      delta: 'Hel',
      source: { crewAgentId: 'greeter' },
    });
    expect(events[4]).toEqual({ type: 'engine_event', event: { type: 'handoff', from: 'a', to: 'b' } });
    const outcome = await turn.outcome;
    expect(events.at(-1)).toEqual({ type: 'outcome', outcome });
    expect(outcome).toMatchObject({ status: 'completed', output: 'done' });
    await runner.close();
  });

  it('runs the turn even when nobody iterates, and breaking out does not abort it', async () => {
    const runner = runnerWith(chunky);
    const unread = runner.stream({ channel: 'cli', text: 'one' });
    expect((await unread.outcome).status).toBe('completed');
    const gate = deferred();
    const slow = createRunner({
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            ctx.emitText('first');
            await gate.promise;
            return { output: 'finished' };
          },
        },
      ],
    });
    const turn = slow.stream({ channel: 'cli', text: 'x' });
    for await (const event of turn) if (event.type === 'text_delta') break;
    gate.resolve();
    expect(await turn.outcome).toMatchObject({ status: 'completed', output: 'finished' });
    await runner.close();
    await slow.close();
  });

  it("carries only its own signal's events, also for a signal queued behind another turn", async () => {
    const runner = runnerWith(async (ctx) => {
      ctx.emitText(`reply to ${String(ctx.history.at(-1)?.content)}`);
      return {};
    });
    const a = runner.streamDispatch(MAIN, signal(SignalKind.UserMessage, 'a'));
    const b = runner.streamDispatch(MAIN, signal(SignalKind.UserMessage, 'b'));
    const deltas = (events: TurnEvent[]) => events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : []));
    expect(deltas(await collect(b))).toEqual(['reply to b']);
    expect(deltas(await collect(a))).toEqual(['reply to a']);
    await runner.close();
  });

  it('costs nothing when nobody streams: streaming is false, emitText is a no-op, plugins get no text_delta', async () => {
    const seen: TurnContext[] = [];
    const runner = runnerWith(async (ctx) => {
      seen.push(ctx);
      ctx.emitText('ignored');
      return {};
    });
    const events: RunnerEvent[] = [];
    runner.on((e) => events.push(e));
    await runner.handle({ channel: 'cli', text: 'plain' });
    await collect(runner.stream({ channel: 'cli', text: 'streamed' }));
    expect(seen.map((c) => c.streaming)).toEqual([false, true]);
    const texts = events.flatMap((e) => (e.type === 'engine_event' && e.event.type === 'text_delta' ? [e.event] : []));
    expect(texts).toEqual([{ type: 'text_delta', delta: 'ignored' }]); // the streamed turn's only
    await runner.close();
  });

  it('a refused call: iterating throws the RunnerError and outcome rejects with it', async () => {
    const runner = runnerWith(chunky);
    const bad = runner.streamDispatch('not a key', signal(SignalKind.UserMessage, 'x'));
    await rejectsCode(collect(bad), 'RUNNER_INPUT_INVALID');
    await rejectsCode(bad.outcome, 'RUNNER_INPUT_INVALID');
    await runner.close();
    const closed = runner.stream({ channel: 'cli', text: 'late' }); // nobody awaits its outcome: no unhandled rejection
    await rejectsCode(collect(closed), 'RUNNER_CLOSED');
  });

  it('a non-string delta is reported as a warning, never streamed', async () => {
    const runner = runnerWith(async (ctx) => {
      ctx.emitText(42 as never);
      return {};
    });
    const warnings: string[] = [];
    runner.on((e) => {
      if (e.type === 'warning') warnings.push(e.message);
    });
    const events = await collect(runner.stream({ channel: 'cli', text: 'x' }));
    expect(events.some((e) => e.type === 'text_delta')).toBe(false);
    expect(warnings.join()).toContain('expected a string');
    await runner.close();
  });

  it("pipelineEngine streams a stage's model text with the stage as source", async () => {
    const pipeline = definePipeline({
      name: 'answer',
      stages: [
        {
          name: 'draft',
          run: async (ctx) => {
            let text = '';
            for await (const part of (ctx.model as NonNullable<typeof ctx.model>).stream({
              messages: [{ role: 'user', content: 'x' }],
            }))
              if (part.type === 'text-delta') text += part.delta;
            return { text };
          },
        },
      ],
    });
    const model = scriptedModel([{ content: 'streamed answer' }], { streamChunkChars: 4 });
    const runner = createRunner({ agents: [{ id: 'main', engine: pipelineEngine(pipeline, { model }) }] });
    const events = await collect(runner.stream({ channel: 'cli', text: 'go' }));
    const deltas = events.flatMap((e) => (e.type === 'text_delta' ? [e] : []));
    expect(deltas.map((d) => d.delta).join('')).toBe('streamed answer');
    expect(deltas[0]).toMatchObject({ agentId: 'main', source: { stage: 'draft' } });
    expect(events.some((e) => e.type === 'engine_event' && e.event.type === 'stage_delta')).toBe(false);
    await runner.close();
  });
});

describe('Runner.transcript', () => {
  it("lists the user and assistant messages by default, or the engine's own transcript", async () => {
    const runner = runnerWith(chunky);
    await runner.handle({ channel: 'cli', text: 'hi' });
    expect(await runner.transcript(MAIN)).toEqual([
      { type: 'user', text: 'hi' },
      { type: 'assistant', agentId: 'main', text: 'Hello there' },
    ]);
    expect(await runner.transcript('agent:main:nobody')).toEqual([]);
    await rejectsCode(runner.transcript('bad key'), 'RUNNER_INPUT_INVALID');
    await runner.close();

    const custom = createRunner({
      agents: [
        {
          id: 'main',
          engine: {
            turn: chunky,
            transcript: (history) => [{ type: 'assistant', agentId: 'summary', text: `${history.length} messages` }],
          },
        },
      ],
    });
    await custom.handle({ channel: 'cli', text: 'hi' });
    expect(await custom.transcript(MAIN)).toEqual([{ type: 'assistant', agentId: 'summary', text: '2 messages' }]);
    await custom.close();
  });
});
