// The turn-stream contract (streaming.md) through a real crew engine: nobody streaming costs
// nothing, a TurnStream carries its own signal only and ends with the one outcome, iteration is
// optional and breaking out never aborts, the caller's abortSignal stops the turn like any stop,
// and a model breaking the stream rules fails the turn without a partial history.
import { describe, expect, it } from 'vitest';
import {
  ModelStreamError,
  SignalKind,
  signal,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type ChatStreamPart,
  type RunnerEvent,
  type TurnEvent,
} from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig, type CrewResponse } from '@signalyard/crew';
import { definePipeline } from '@signalyard/pipeline';
import { collect, deferred, expectCode } from '@signalyard/test-utils';
import { createRunner, crewEngine, pipelineEngine, type Engine, type TurnContext } from 'signalyard';
import { heldEngine } from './support.js';

const crew = parseCrewConfig(
  `
entry_point: triage
agents:
  - id: triage
  - id: billing
routing:
  signals:
    triage:
      - { signal: "[ROUTE_BILLING]", target: billing }
    billing:
      - { signal: "[DONE]", target: "" }
`,
  { file: 'crew.yaml' },
);

const dm = (text: string) => ({ channel: 'web', peer: { kind: 'dm' as const, id: '7' }, text });
/** The session of `dm(...)` messages to the agent `desk` (direct messages share the main session). */
const SESSION = 'agent:desk:main';

/** A model recording how it was called: `generate` and `stream` answer with the next reply of its agent. */
function spyModel(replies: Record<string, string[]>): ChatModel & { generated: string[]; streamed: string[] } {
  const next = (request: ChatRequest): ChatResponse => ({ content: replies[request.agentId ?? '']?.shift() ?? '' });
  const model = {
    generated: [] as string[],
    streamed: [] as string[],
    generate(request: ChatRequest): Promise<ChatResponse> {
      model.generated.push(request.agentId ?? '');
      return Promise.resolve(next(request));
    },
    async *stream(request: ChatRequest): AsyncIterable<ChatStreamPart> {
      model.streamed.push(request.agentId ?? '');
      const response = next(request);
      for (let i = 0; i < response.content.length; i += 4)
        yield { type: 'text-delta', delta: response.content.slice(i, i + 4) };
      yield { type: 'finish', response };
    },
  };
  return model;
}

/** A crew engine whose turns record `ctx.streaming`. */
function watched(model: ChatModel): { engine: Engine; streaming: boolean[] } {
  const inner = crewEngine(crew, { model });
  const streaming: boolean[] = [];
  return {
    streaming,
    engine: {
      ...inner,
      turn: (ctx: TurnContext) => {
        streaming.push(ctx.streaming);
        return inner.turn(ctx);
      },
    },
  };
}

const textDeltas = (events: readonly RunnerEvent[]) =>
  events.filter((e) => e.type === 'engine_event' && (e.event.type === 'text_delta' || e.event.type === 'stage_delta'));
const deltasOf = (events: readonly TurnEvent[]): string =>
  events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : [])).join('');

describe('handle and dispatch with nobody streaming', () => {
  it('the engine sees streaming false, the model is only generated, and no text_delta reaches plugins', async () => {
    const model = spyModel({
      triage: ['To billing. [ROUTE_BILLING]', 'Again. [ROUTE_BILLING]', 'Once more. [ROUTE_BILLING]'],
      billing: ['Refunded. [DONE]', 'Done again. [DONE]', 'Done thrice. [DONE]'],
    });
    const { engine, streaming } = watched(model);
    const seen: RunnerEvent[] = [];
    const runner = createRunner({
      agents: [{ id: 'desk', engine }],
      plugins: [{ name: 'listener', setup: (ctx) => void ctx.on((e) => seen.push(e)) }],
    });
    runner.on((e) => seen.push(e));
    const handled = await runner.handle(dm('refund please'));
    const dispatched = await runner.dispatch(handled.sessionKey, signal(SignalKind.UserMessage, 'and again'));
    expect([handled.status, dispatched.status]).toEqual(['completed', 'completed']);
    expect(streaming).toEqual([false, false]);
    expect(model.streamed).toEqual([]);
    expect(model.generated).toEqual(['triage', 'billing', 'triage', 'billing']);
    expect(textDeltas(seen)).toEqual([]);
    // The crew's other events still reach plugins; the output still has the visible text.
    expect(seen.some((e) => e.type === 'engine_event' && e.event.type === 'handoff')).toBe(true);
    expect((handled.output as CrewResponse).visibleContent).toBe('Refunded.');

    // The same runner streams when asked to: then, and only then, the model streams.
    const events = await collect(runner.stream(dm('once more')));
    expect(streaming).toEqual([false, false, true]);
    expect(model.streamed).toEqual(['triage', 'billing']);
    expect(deltasOf(events)).toBe('Once more.Done thrice.');
    // Streamed, plugins get the deltas as engine_events; the TurnStream carries them once, as text_delta.
    const pluginDeltas = textDeltas(seen).map((e) => (e.type === 'engine_event' ? e.event.delta : undefined));
    expect(pluginDeltas).toEqual(events.flatMap((e) => (e.type === 'text_delta' ? [e.delta, e.delta] : []))); // listener + on()
    expect(events.some((e) => e.type === 'engine_event' && e.event.type === 'text_delta')).toBe(false);
    await runner.close();
  });

  it('a pipeline stage that streams from ctx.model under handle: its plugins see no text or stage deltas', async () => {
    const pipeline = definePipeline({
      name: 'answer',
      stages: [
        {
          name: 'draft',
          run: async (ctx) => {
            let text = '';
            const model = ctx.model as NonNullable<typeof ctx.model>;
            for await (const part of model.stream({ messages: [{ role: 'user', content: 'x' }] }))
              if (part.type === 'text-delta') text += part.delta;
            return { text };
          },
        },
      ],
    });
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: pipelineEngine(pipeline, { model: scriptedModel(['a streamed draft'], { streamChunkChars: 2 }) }),
        },
      ],
    });
    const seen: RunnerEvent[] = [];
    runner.on((e) => seen.push(e));
    const outcome = await runner.handle({ channel: 'cli', text: 'go' });
    expect(outcome.status).toBe('completed');
    expect(seen.some((e) => e.type === 'engine_event' && e.event.type === 'stage_end')).toBe(true);
    expect(textDeltas(seen)).toEqual([]);
    await runner.close();
  });
});

describe('TurnStream: its own signal, one outcome last', () => {
  it('three signals queued for one session: each stream carries only its own events, starting at its own turn', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const streams = ['a', 'b', 'c'].map((t) =>
      runner.streamDispatch('agent:main:main', signal(SignalKind.UserMessage, t)),
    );
    const seen: TurnEvent[][] = [[], [], []];
    const reading = streams.map(async (s, i) => {
      for await (const event of s) seen[i]!.push(event);
    });
    const first = await held.turn(0);
    first.ctx.emitText('A1');
    first.ctx.emit({ type: 'step', of: 'a' });
    await new Promise((resolve) => setImmediate(resolve));
    // b and c wait behind a: nothing of theirs yet, not even the route decision.
    expect(seen[1]).toEqual([]);
    expect(seen[2]).toEqual([]);
    first.ctx.emitText('A2');
    first.finish({ output: 'A' });
    for (const [i, t] of ['b', 'c'].entries()) {
      const turn = await held.turn(i + 1);
      expect(turn.text).toBe(t);
      turn.ctx.emitText(`${t.toUpperCase()}1`);
      turn.ctx.emit({ type: 'step', of: t });
      turn.finish({ output: t.toUpperCase() });
    }
    await Promise.all(reading);
    const shape = (events: TurnEvent[]) =>
      events.map((e) =>
        e.type === 'text_delta'
          ? `text:${e.delta}`
          : e.type === 'engine_event'
            ? `event:${String(e.event.of)}`
            : e.type === 'outcome'
              ? `outcome:${String(e.outcome.output)}`
              : e.type,
      );
    expect(seen.map(shape)).toEqual([
      ['routed', 'text:A1', 'event:a', 'text:A2', 'outcome:A'],
      ['routed', 'text:B1', 'event:b', 'outcome:B'],
      ['routed', 'text:C1', 'event:c', 'outcome:C'],
    ]);
    for (const [i, s] of streams.entries())
      expect(seen[i]!.at(-1)).toEqual({ type: 'outcome', outcome: await s.outcome });
    await runner.close();
  });

  it('the last event is the one outcome, equal to .outcome and to what dispatch returns for the same turn', async () => {
    const replies = () => ({ triage: ['To billing. [ROUTE_BILLING]'], billing: ['Refunded. [DONE]'] });
    const streamed = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(crew, { model: scriptedModel(replies(), { streamChunkChars: 3 }) }) }],
    });
    const plain = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(crew, { model: scriptedModel(replies()) }) }],
    });
    const message = signal(SignalKind.UserMessage, 'refund please');
    const turn = streamed.streamDispatch(SESSION, message);
    const events = await collect(turn);
    expect(events.filter((e) => e.type === 'outcome')).toHaveLength(1);
    const last = events.at(-1);
    expect(last?.type).toBe('outcome');
    const outcome = await turn.outcome;
    expect(last).toEqual({ type: 'outcome', outcome });
    expect(outcome).toEqual(await plain.dispatch(SESSION, message));
    expect(outcome).toMatchObject({ status: 'completed', output: { visibleContent: 'Refunded.' } });
    await streamed.close();
    await plain.close();
  });
});

describe('TurnStream: iteration is optional and never aborts', () => {
  it('breaking out after the first delta does not abort the turn: it completes and is saved', async () => {
    const gate = deferred();
    const signals: AbortSignal[] = [];
    const model = spyModel({ billing: ['Refunded. [DONE]'] });
    const inner = crewEngine(crew, {
      model: {
        triage: {
          generate: () => Promise.reject(new Error('streamed turns do not generate')),
          async *stream(request) {
            if (request.abortSignal !== undefined) signals.push(request.abortSignal);
            yield { type: 'text-delta', delta: 'To billing.' };
            await gate.promise;
            yield { type: 'text-delta', delta: ' [ROUTE_BILLING]' };
            yield { type: 'finish', response: { content: 'To billing. [ROUTE_BILLING]' } };
          },
        },
        billing: model,
      },
    });
    const runner = createRunner({ agents: [{ id: 'desk', engine: inner }] });
    const turn = runner.stream(dm('refund please'));
    const read: TurnEvent[] = [];
    for await (const event of turn) {
      read.push(event);
      if (event.type === 'text_delta') break;
    }
    expect(read.at(-1)).toMatchObject({ type: 'text_delta', delta: 'To billing.' });
    gate.resolve();
    const outcome = await turn.outcome;
    expect(outcome.status).toBe('completed');
    expect(signals.every((s) => !s.aborted)).toBe(true);
    expect(model.streamed).toEqual(['billing']);
    expect((await runner.session(outcome.sessionKey))?.history.map((m) => m.content)).toEqual([
      'refund please',
      'To billing. [ROUTE_BILLING]',
      'Refunded. [DONE]',
    ]);
    await runner.close();
  });

  it('a stream nobody reads still runs and saves its turn; read later, it yields every event, buffered', async () => {
    const model = spyModel({ triage: ['To billing. [ROUTE_BILLING]'], billing: ['Refunded. [DONE]'] });
    const runner = createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model }) }] });
    const turn = runner.stream(dm('refund please'));
    const outcome = await turn.outcome;
    expect(outcome.status).toBe('completed');
    expect((await runner.session(outcome.sessionKey))?.history).toHaveLength(3);
    const events = await collect(turn);
    expect(events[0]?.type).toBe('routed');
    expect(deltasOf(events)).toBe('To billing.Refunded.');
    expect(events.at(-1)).toEqual({ type: 'outcome', outcome });
    await runner.close();
  });
  it('two loops reading one stream at once share its events, and both end with the turn', async () => {
    const gate = deferred();
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            ctx.emitText('one');
            await gate.promise;
            ctx.emitText('two');
            return { output: 'done' };
          },
        },
      ],
    });
    const turn = runner.stream({ channel: 'cli', text: 'x' });
    const both = Promise.all([collect(turn), collect(turn)]);
    await new Promise((resolve) => setImmediate(resolve)); // both loops now wait for the next event
    gate.resolve();
    const [left, right] = await both;
    const all = [...left, ...right];
    expect(all.map((e) => e.type).sort()).toEqual(['outcome', 'routed', 'text_delta', 'text_delta']);
    expect(all.find((e) => e.type === 'outcome')).toEqual({ type: 'outcome', outcome: await turn.outcome });
    await runner.close();
  });
});

describe("TurnStream: the caller's abortSignal", () => {
  it('aborts the streamed turn: the stream ends with a stopped outcome, nothing of the turn is saved, the session goes on', async () => {
    const started = deferred<AbortSignal | undefined>();
    let calls = 0;
    const model: ChatModel = {
      generate: (request) =>
        Promise.resolve({ content: request.agentId === 'triage' ? 'Here. [ROUTE_BILLING]' : 'Here now. [DONE]' }),
      async *stream(request) {
        if (calls++ > 0) throw new Error('only the first turn streams');
        yield { type: 'text-delta', delta: 'Let me think' };
        started.resolve(request.abortSignal);
        await new Promise(() => undefined); // never answers, and ignores the signal
      },
    };
    const runner = createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model }) }] });
    const controller = new AbortController();
    const turn = runner.stream(dm('refund please'), { abortSignal: controller.signal });
    const next = runner.handle(dm('are you there?'));
    // Read until the first delta has arrived, then abort while the model hangs.
    const events: TurnEvent[] = [];
    const iterator = turn[Symbol.asyncIterator]();
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) {
      events.push(r.value);
      if (r.value.type === 'text_delta') break;
    }
    const reading = (async () => {
      for (let r = await iterator.next(); !r.done; r = await iterator.next()) events.push(r.value);
      return events;
    })();
    const modelSignal = await started.promise;
    controller.abort();
    await reading; // the stream ends; iterating does not throw
    expect(modelSignal?.aborted).toBe(true);
    expect(events.map((e) => (e.type === 'engine_event' ? e.event.type : e.type))).toEqual([
      'routed',
      'agent_start',
      'text_delta',
      'outcome',
    ]);
    const outcome = await turn.outcome;
    expect(outcome.status).toBe('stopped');
    expect(events.at(-1)).toEqual({ type: 'outcome', outcome });
    // The stopped turn saved its user message and nothing else; the message queued behind it ran.
    expect((await next).status).toBe('completed');
    expect((await runner.session(outcome.sessionKey))?.history.map((m) => m.content)).toEqual([
      'refund please',
      'are you there?',
      'Here. [ROUTE_BILLING]',
      'Here now. [DONE]',
    ]);
    await runner.close();
  });

  it('a streamed signal aborted while queued, or already aborted, is stopped without running: only its outcome', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const first = runner.stream({ channel: 'cli', text: 'a' });
    const running = await held.turn(0);
    const controller = new AbortController();
    const queued = runner.stream({ channel: 'cli', text: 'b' }, { abortSignal: controller.signal });
    const early = runner.stream({ channel: 'cli', text: 'c' }, { abortSignal: AbortSignal.abort() });
    controller.abort();
    for (const stopped of [queued, early]) {
      const events = await collect(stopped);
      expect(events).toEqual([{ type: 'outcome', outcome: await stopped.outcome }]);
      expect((await stopped.outcome).status).toBe('stopped');
    }
    expect(running.ctx.abortSignal.aborted).toBe(false);
    running.finish({ output: 'a' });
    expect((await first.outcome).status).toBe('completed');
    expect(held.turns.map((t) => t.text)).toEqual(['a']);
    await runner.close();
  });
});

/** A model whose stream breaks one of the rules `streamChat` checks. */
function breaking(parts: readonly ChatStreamPart[]): ChatModel {
  return {
    generate: () => Promise.reject(new Error('not used')),
    async *stream() {
      yield* parts;
    },
  };
}

describe('a model stream that breaks the rules', () => {
  const finish = (content: string): ChatStreamPart => ({ type: 'finish', response: { content } });
  const text = (delta: string): ChatStreamPart => ({ type: 'text-delta', delta });
  it.each<[string, readonly ChatStreamPart[]]>([
    ['text after finish', [text('Refunded. [DONE]'), finish('Refunded. [DONE]'), text(' PS')]],
    ['deltas that do not match the content', [text('Refunded.'), finish('Refunded. [DONE]')]],
    ['no finish', [text('Refunded. [DONE]')]],
  ])(
    '%s: the turn fails with MODEL_STREAM_INVALID as the cause, and nothing of the turn is saved',
    async (_title, parts) => {
      // triage answers well and hands off; billing's stream is broken: the whole turn fails.
      const model = {
        triage: scriptedModel(['To billing. [ROUTE_BILLING]'], { streamChunkChars: 4 }),
        billing: breaking(parts),
      };
      const runner = createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model }) }] });
      const seen: RunnerEvent[] = [];
      runner.on((e) => seen.push(e));
      const turn = runner.stream(dm('refund please'));
      const events = await collect(turn);
      const outcome = await turn.outcome;
      expect(events.at(-1)).toEqual({ type: 'outcome', outcome });
      expect(outcome.status).toBe('failed');
      const error = expectCode(outcome.error, 'CREW_AGENT_FAILED');
      expect(ModelStreamError.isInstance(error.cause)).toBe(true);
      expectCode(error.cause, 'MODEL_STREAM_INVALID');
      // Never a partial history: not triage's good reply, not billing's broken one.
      expect((await runner.session(outcome.sessionKey))?.history).toEqual([
        expect.objectContaining({ role: 'user', content: 'refund please' }),
      ]);
      expect(await runner.transcript(outcome.sessionKey)).toEqual([{ type: 'user', text: 'refund please' }]);
      expect(
        seen.some(
          (e) => e.type === 'engine_event' && e.event.type === 'agent_response' && e.event.agentId === 'billing',
        ),
      ).toBe(false);
      await runner.close();
    },
  );
});
