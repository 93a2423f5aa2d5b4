// End to end: a crew turn streamed by a real Runner (crewEngine over streaming models) into
// `toUIMessageStream`, read back with the AI SDK's own `readUIMessageStream`. The other tests of
// this folder feed hand-written TurnEvents; this one checks that what the Runner really produces
// maps to the UI message the contract promises. (`signalyard` is a devDependency here, as it is
// for otel, inspector and the stores: tests only, the published package depends on core alone.)
import { describe, expect, it } from 'vitest';
import type { ChatModel, ChatStreamPart, TurnEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { SignalMatcher, parseCrewConfig, type CrewResponse } from '@signalyard/crew';
import { deferred, type Deferred } from '@signalyard/test-utils';
import { createRunner, crewEngine } from 'signalyard';
import type { UIMessage, UIMessageChunk } from 'ai';
import { toUIMessageStream, transcriptToUIMessages } from '@signalyard/ai-sdk';
import { chunksOf, readMessage, texts } from './ui-support.js';

const dataParts = (message: UIMessage | undefined, type: string): unknown[] =>
  (message?.parts ?? []).flatMap((p) => (p.type === type ? [(p as { data: unknown }).data] : []));

/** A turn stream that also records the events it passed on, for comparing with the UI message. */
function recorded(turn: AsyncIterable<TurnEvent>): { turn: AsyncIterable<TurnEvent>; events: TurnEvent[] } {
  const events: TurnEvent[] = [];
  return {
    events,
    turn: {
      async *[Symbol.asyncIterator]() {
        for await (const event of turn) {
          events.push(event);
          yield event;
        }
      },
    },
  };
}

const dm = (text: string) => ({ channel: 'web', peer: { kind: 'dm' as const, id: '42' }, text });

describe('a crew turn streamed by the Runner, read back with readUIMessageStream', () => {
  // Three agents, two handoffs; every agent's marker is matched at another level (exact,
  // case-insensitive, normalised), and the scripted model splits every reply into 3-unit deltas,
  // so each marker arrives across several chunks.
  const crew = parseCrewConfig(
    `
entry_point: triage
agents:
  - id: triage
  - id: billing
  - id: closer
routing:
  signals:
    triage:
      - { signal: "[TO_BILLING]", target: billing }
    billing:
      - { signal: "[TO_CLOSER]", target: closer }
    closer:
      - { signal: "[DONE]", target: "" }
`,
    { file: 'crew.yaml' },
  );
  const markers = new SignalMatcher(['[TO_BILLING]', '[TO_CLOSER]', '[DONE]']);
  const replies = {
    triage: ['Let me get billing. [TO_BILLING]'],
    billing: ['Your invoice is paid.\n[to_closer]'],
    closer: ['Anything else?  [ Done ]'],
  };
  const visible = ['Let me get billing.', 'Your invoice is paid.', 'Anything else?'];

  it('three text parts equal the visible replies, two data-handoff parts, no marker in any text part', async () => {
    const model = scriptedModel(replies, { streamChunkChars: 3 });
    const runner = createRunner({ agents: [{ id: 'support', engine: crewEngine(crew, { model }) }] });
    const turn = runner.stream(dm('I was charged twice'));
    const { turn: read, events } = recorded(turn);
    const [forChunks, forReader] = toUIMessageStream(read, { messageId: 'reply-1' }).tee();
    const [chunks, { message, errors }] = await Promise.all([chunksOf(forChunks), readMessage(forReader)]);

    expect(errors).toEqual([]);
    expect(message?.id).toBe('reply-1');
    expect(message?.role).toBe('assistant');
    expect(texts(message)).toEqual(visible);
    for (const text of texts(message)) expect(markers.first(text)).toBeUndefined();
    expect(dataParts(message, 'data-handoff')).toEqual([
      { from: 'triage', to: 'billing' },
      { from: 'billing', to: 'closer' },
    ]);
    expect(dataParts(message, 'data-route')).toHaveLength(1);
    // Printed as they are, the parts show no marker: not in the text, not in the data.
    for (const part of message?.parts ?? []) expect(markers.first(JSON.stringify(part))).toBeUndefined();
    // The parts in the order they happened: each agent's text, then its handoff.
    expect(message?.parts.flatMap((p) => (p.type === 'text' || p.type === 'data-handoff' ? [p.type] : []))).toEqual([
      'text',
      'data-handoff',
      'text',
      'data-handoff',
      'text',
    ]);
    // The reply really streamed: several deltas per block, none holding a marker's text.
    const deltas = chunks.flatMap((c) => (c.type === 'text-delta' ? [c.delta] : []));
    expect(deltas.length).toBeGreaterThan(visible.length);
    expect(deltas.join('')).toBe(visible.join(''));
    expect([chunks[0]?.type, chunks.at(-1)?.type]).toEqual(['start', 'finish']);

    // The UI message agrees with the turn's outcome, the session and the transcript.
    const outcome = await turn.outcome;
    expect(events.at(-1)).toEqual({ type: 'outcome', outcome });
    const response = outcome.output as CrewResponse;
    expect(outcome.status).toBe('completed');
    expect(response.visibleContent).toBe(visible[2]);
    expect(response.content).toBe(replies.closer[0]);
    const session = await runner.session(outcome.sessionKey);
    expect(session?.history.map((m) => m.content)).toEqual([
      'I was charged twice',
      replies.triage[0],
      replies.billing[0],
      replies.closer[0],
    ]);
    const transcript = await runner.transcript(outcome.sessionKey);
    expect(transcript.flatMap((e) => (e.type === 'assistant' ? [e.text] : []))).toEqual(visible);
    await runner.close();
  });

  it('reads the same message whether the turn was streamed through the provider in 1-unit or whole-reply deltas', async () => {
    const messageOf = async (chunkChars: number): Promise<UIMessage | undefined> => {
      const model = scriptedModel(replies, { streamChunkChars: chunkChars });
      const runner = createRunner({ agents: [{ id: 'support', engine: crewEngine(crew, { model }) }] });
      const { message } = await readMessage(toUIMessageStream(runner.stream(dm('hi')), { messageId: 'm' }));
      await runner.close();
      return message;
    };
    const [fine, whole] = [await messageOf(1), await messageOf(1000)];
    expect(texts(fine)).toEqual(visible);
    expect(fine).toEqual(whole);
  });
});

/**
 * A model streaming `chunks` one by one: before each chunk it waits for `waits[i]`, after it
 * opens `opens[i]`, so two members of a parallel group take turns chunk by chunk.
 */
function lockstep(chunks: readonly string[], waits: readonly (Deferred | undefined)[], opens: readonly Deferred[]) {
  const model: ChatModel = {
    generate: () => Promise.reject(new Error('a streamed turn calls stream, not generate')),
    async *stream(): AsyncIterable<ChatStreamPart> {
      for (const [i, delta] of chunks.entries()) {
        await waits[i]?.promise;
        yield { type: 'text-delta', delta };
        opens[i]?.resolve();
      }
      yield { type: 'finish', response: { content: chunks.join('') } };
    },
  };
  return model;
}

describe('a crew turn with a parallel group, through the Runner into the UI message stream', () => {
  const crew = parseCrewConfig(
    `
entry_point: lead
agents:
  - id: lead
  - id: law
  - id: tax
  - id: summary
routing:
  signals:
    lead:
      - { signal: "[ASK_EXPERTS]", target: experts }
    summary:
      - { signal: "[DONE]", target: "" }
  parallel_groups:
    experts: { agents: [law, tax], next_agent: summary }
`,
    { file: 'crew.yaml' },
  );

  it('one block per member, each member’s interleaved deltas in its own block', async () => {
    // law 1, tax 1, law 2, tax 2, law 3, tax 3: each chunk waits for the other member's previous one.
    const g = Array.from({ length: 6 }, () => deferred());
    const model = {
      lead: scriptedModel(['Asking both experts. [ASK_EXPERTS]'], { streamChunkChars: 5 }),
      law: lockstep(['Legally ', 'it is ', 'fine.'], [undefined, g[1], g[3]], [g[0]!, g[2]!, g[4]!]),
      tax: lockstep(['Tax-wise ', 'it is ', 'deductible.'], [g[0], g[2], g[4]], [g[1]!, g[3]!, g[5]!]),
      summary: scriptedModel(['Both agree. [DONE]'], { streamChunkChars: 4 }),
    };
    const runner = createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model }) }] });
    const turn = runner.stream(dm('Can I deduct it?'));
    const { turn: read, events } = recorded(turn);
    const [forChunks, forReader] = toUIMessageStream(read).tee();
    const [chunks, { message, errors }] = await Promise.all([chunksOf(forChunks), readMessage(forReader)]);
    expect(errors).toEqual([]);

    // The Runner streamed the members' deltas interleaved, each tagged with its own agent and path.
    const memberDeltas = events.flatMap((e) =>
      e.type === 'text_delta' && (e.source?.crewAgentId === 'law' || e.source?.crewAgentId === 'tax')
        ? [`${e.source.crewAgentId}:${e.source.path?.join('>')}:${e.delta}`]
        : [],
    );
    expect(memberDeltas).toEqual([
      'law:lead>law:Legally',
      'tax:lead>tax:Tax-wise',
      'law:lead>law: it is',
      'tax:lead>tax: it is',
      'law:lead>law: fine.',
      'tax:lead>tax: deductible.',
    ]);

    // On the wire: one block per member, opened once, their deltas alternating between the two ids.
    const blockOf = new Map<string, string>();
    const starts = chunks.filter((c): c is Extract<UIMessageChunk, { type: 'text-start' }> => c.type === 'text-start');
    expect(starts).toHaveLength(4);
    const textOf = (id: string) =>
      chunks.flatMap((c) => (c.type === 'text-delta' && c.id === id ? [c.delta] : [])).join('');
    for (const s of starts) blockOf.set(textOf(s.id), s.id);
    expect(starts.at(-1)?.id).toBe(blockOf.get('Both agree.'));
    const lawId = blockOf.get('Legally it is fine.');
    const taxId = blockOf.get('Tax-wise it is deductible.');
    expect(lawId).toBeDefined();
    expect(taxId).toBeDefined();
    const memberIds = chunks.flatMap((c) =>
      c.type === 'text-delta' && (c.id === lawId || c.id === taxId) ? [c.id] : [],
    );
    expect(memberIds).toEqual([lawId, taxId, lawId, taxId, lawId, taxId]);

    // Read back by the AI SDK: four text parts, members in the order they first spoke.
    expect(texts(message)).toEqual([
      'Asking both experts.',
      'Legally it is fine.',
      'Tax-wise it is deductible.',
      'Both agree.',
    ]);
    // Each member takes over from the lead (with the group), then the group's next agent.
    const handoffs = [
      { from: 'lead', to: 'law', group: 'experts' },
      { from: 'lead', to: 'tax', group: 'experts' },
      { from: 'lead', to: 'summary' },
    ];
    expect(dataParts(message, 'data-handoff')).toEqual(handoffs);
    const outcome = await turn.outcome;
    expect(outcome.status).toBe('completed');
    expect((outcome.output as CrewResponse).visibleContent).toBe('Both agree.');
    expect(events.at(-1)).toEqual({ type: 'outcome', outcome } satisfies TurnEvent);
    // After a page reload: the same parts in the same order (decisions-wave3.md §3–§4) — each
    // member's visible reply (markers hidden) after its handoff, never the group's collected results.
    const reloaded = transcriptToUIMessages(await runner.transcript(outcome.sessionKey));
    const reloadedTexts = reloaded.flatMap((m) => texts(m));
    expect(reloadedTexts).toEqual(['Can I deduct it?', ...texts(message)]);
    for (const text of reloadedTexts) expect(text).not.toMatch(/\[(ASK_EXPERTS|DONE)\]/);
    expect(reloaded.flatMap((m) => dataParts(m, 'data-handoff'))).toEqual(handoffs);
    const kinds = (m: UIMessage | undefined) =>
      (m?.parts ?? []).flatMap((p) => (p.type === 'text' || p.type === 'data-handoff' ? [p.type] : []));
    expect(kinds(reloaded.at(-1))).toEqual(kinds(message));
    expect(kinds(message)).toHaveLength(7);
    await runner.close();
  });
});
