import { describe, expect, expectTypeOf, it } from 'vitest';
import fc from 'fast-check';
import { SignalyardError, type ToolCall, type TurnEvent } from '@signalyard/core';
import { isToolUIPart, type UIMessage, type UIMessageChunk } from 'ai';
import {
  UIMessageError,
  toUIMessageStream,
  type HandoffData,
  type SignalyardUIMessage,
  type ToUIMessageStreamOptions,
} from '@signalyard/ai-sdk';
import {
  agentResponse,
  chunksOf,
  delta,
  engine,
  handoff,
  outcome,
  pendingApproval,
  readMessage,
  routed,
  texts,
  turnOf,
} from './ui-support.js';

const dataParts = (message: UIMessage | undefined, type: string): unknown[] =>
  (message?.parts ?? []).flatMap((p) => (p.type === type ? [(p as { data: unknown }).data] : []));

const toolParts = (message: UIMessage | undefined) => (message?.parts ?? []).filter(isToolUIPart);

/** Every text block is opened once, written only while open, and closed once, with an id of its own. */
function expectWellFormedBlocks(chunks: readonly UIMessageChunk[]): void {
  const open = new Set<string>();
  const used = new Set<string>();
  for (const chunk of chunks) {
    if (chunk.type === 'text-start') {
      expect(used.has(chunk.id)).toBe(false);
      used.add(chunk.id);
      open.add(chunk.id);
    } else if (chunk.type === 'text-delta') {
      expect(open.has(chunk.id)).toBe(true);
    } else if (chunk.type === 'text-end') {
      expect(open.delete(chunk.id)).toBe(true);
    }
  }
  expect(open.size).toBe(0);
}

/** A three-agent crew turn: triage → billing → closer, two handoffs, markers hidden from the deltas. */
const crewTurn: readonly TurnEvent[] = [
  routed,
  engine({ type: 'agent_start', agentId: 'triage' }),
  delta('triage', 'Let me get ', ['triage']),
  delta('triage', 'billing.', ['triage']),
  agentResponse('triage', 'Let me get billing. [TO_BILLING]'),
  handoff('triage', 'billing', '[TO_BILLING]'),
  engine({ type: 'agent_start', agentId: 'billing' }),
  delta('billing', 'Your invoice ', ['triage', 'billing']),
  delta('billing', 'is paid.', ['triage', 'billing']),
  agentResponse('billing', 'Your invoice is paid. [TO_CLOSER]'),
  handoff('billing', 'closer', '[TO_CLOSER]'),
  engine({ type: 'agent_start', agentId: 'closer' }),
  delta('closer', 'Anything else?', ['triage', 'billing', 'closer']),
  agentResponse('closer', 'Anything else? [DONE]'),
  engine({ type: 'terminate', agentId: 'closer', reason: 'terminated_by_signal', signal: '[DONE]' }),
  outcome('completed'),
];

describe('toUIMessageStream: text and handoffs', () => {
  it('streams a three-agent crew with two handoffs as three text parts and two data-handoff parts', async () => {
    const { message, errors } = await readMessage(toUIMessageStream(turnOf(crewTurn)));
    expect(errors).toEqual([]);
    expect(message?.role).toBe('assistant');
    expect(texts(message)).toEqual(['Let me get billing.', 'Your invoice is paid.', 'Anything else?']);
    expect(dataParts(message, 'data-handoff')).toEqual([
      { from: 'triage', to: 'billing' },
      { from: 'billing', to: 'closer' },
    ]);
    for (const text of texts(message)) expect(text).not.toMatch(/\[(TO_BILLING|TO_CLOSER|DONE)\]/);
    // A page that prints every part as it is (data parts too) shows no marker either.
    expect(JSON.stringify(message?.parts)).not.toMatch(/TO_BILLING|TO_CLOSER|DONE/);
    expect(message?.parts.map((p) => p.type)).toEqual([
      'data-route',
      'text',
      'data-handoff',
      'text',
      'data-handoff',
      'text',
    ]);
    expect(message?.parts.filter((p) => p.type === 'text').every((p) => p.state === 'done')).toBe(true);
  });

  it('with includeSignals: true, a handoff part also says how (via) and names the marker, for debugging views', async () => {
    const { message } = await readMessage(toUIMessageStream(turnOf(crewTurn), { includeSignals: true }));
    expect(dataParts(message, 'data-handoff')).toEqual([
      { from: 'triage', to: 'billing', via: 'signal', signal: '[TO_BILLING]' },
      { from: 'billing', to: 'closer', via: 'signal', signal: '[TO_CLOSER]' },
    ]);
    // The text parts stay without markers.
    expect(texts(message)).toEqual(['Let me get billing.', 'Your invoice is paid.', 'Anything else?']);
  });

  it("carries a handoff's parallel group when the event names one", async () => {
    const turn = [
      engine({ type: 'handoff', from: 'lead', to: 'summary', via: 'parallel', group: 'experts', handoffs: 1 }),
      outcome('completed'),
    ];
    const { message } = await readMessage(toUIMessageStream(turnOf(turn)));
    expect(dataParts(message, 'data-handoff')).toEqual([{ from: 'lead', to: 'summary', group: 'experts' }]);
    const debug = await readMessage(toUIMessageStream(turnOf(turn), { includeSignals: true }));
    expect(dataParts(debug.message, 'data-handoff')).toEqual([
      { from: 'lead', to: 'summary', group: 'experts', via: 'parallel' },
    ]);
  });

  it('sends start first and finish last, and opens, writes and closes each block with its own id', async () => {
    const chunks = await chunksOf(toUIMessageStream(turnOf(crewTurn)));
    expect(chunks[0]).toEqual({ type: 'start' });
    expect(chunks.at(-1)).toEqual({ type: 'finish' });
    expect(chunks.filter((c) => c.type === 'start' || c.type === 'finish')).toHaveLength(2);
    expectWellFormedBlocks(chunks);
    expect(chunks.filter((c) => c.type === 'text-start')).toHaveLength(3);
  });

  it('opens no block for an agent turn with no visible text, and skips empty deltas', async () => {
    const { message } = await readMessage(
      toUIMessageStream(
        turnOf([
          agentResponse('triage', '[TO_BILLING]'),
          handoff('triage', 'billing', '[TO_BILLING]'),
          delta('billing', '', ['triage', 'billing']),
          delta('billing', 'Paid.', ['triage', 'billing']),
          outcome('completed'),
        ]),
      ),
    );
    expect(message?.parts.map((p) => p.type)).toEqual(['data-handoff', 'text']);
    expect(texts(message)).toEqual(['Paid.']);
  });

  it('starts a new text part when an agent speaks again after another one', async () => {
    const { message } = await readMessage(
      toUIMessageStream(
        turnOf([
          delta('a', 'first'),
          delta('b', 'second'),
          delta('a', 'third'),
          delta('a', ' still third'),
          outcome('completed'),
        ]),
      ),
    );
    expect(texts(message)).toEqual(['first', 'second', 'third still third']);
  });

  it('ends an agent’s block with its reply, so a tool part lands between its two replies', async () => {
    const lookup: ToolCall = { id: 'c1', name: 'lookup', arguments: { word: 'signal' } };
    const { message } = await readMessage(
      toUIMessageStream(
        turnOf([
          delta('clerk', 'Checking.'),
          agentResponse('clerk', 'Checking.', [lookup]),
          engine({ type: 'tool_start', agentId: 'clerk', call: lookup }),
          engine({ type: 'tool_result', agentId: 'clerk', call: lookup, result: 'a marker', isError: false }),
          delta('clerk', 'A signal is a marker.'),
          agentResponse('clerk', 'A signal is a marker.'),
          outcome('completed'),
        ]),
      ),
    );
    expect(message?.parts.map((p) => p.type)).toEqual(['text', 'tool-lookup', 'text']);
    expect(texts(message)).toEqual(['Checking.', 'A signal is a marker.']);
  });

  it('gives each pipeline stage its own block, and stages running at once may interleave', async () => {
    const stage = (name: string, text: string): TurnEvent => ({
      type: 'text_delta',
      agentId: 'writer',
      delta: text,
      source: { stage: name },
    });
    const { message } = await readMessage(
      toUIMessageStream(
        turnOf([
          engine({ type: 'stage_start', stage: 'outline' }),
          stage('outline', 'Outline. '),
          engine({ type: 'stage_end', stage: 'outline' }),
          engine({ type: 'stage_start', stage: 'intro' }),
          engine({ type: 'stage_start', stage: 'body' }),
          stage('intro', 'Intro '),
          stage('body', 'Body '),
          stage('intro', 'ends.'),
          stage('body', 'ends.'),
          engine({ type: 'stage_end', stage: 'intro' }),
          engine({ type: 'stage_end', stage: 'body' }),
          outcome('completed'),
        ]),
      ),
    );
    expect(texts(message)).toEqual(['Outline. ', 'Intro ends.', 'Body ends.']);
  });

  it('keeps one block per agent for a delta stream without source (a plain engine)', async () => {
    const plain = (text: string): TurnEvent => ({ type: 'text_delta', agentId: 'echo', delta: text });
    const { message } = await readMessage(toUIMessageStream(turnOf([plain('He'), plain('llo'), outcome('completed')])));
    expect(texts(message)).toEqual(['Hello']);
  });
});

describe('toUIMessageStream: parallel groups', () => {
  const group = (withGroupEvents: boolean): TurnEvent[] => [
    delta('lead', 'Asking both.', ['lead']),
    agentResponse('lead', 'Asking both. [ASK_BOTH]'),
    ...(withGroupEvents ? [engine({ type: 'parallel_start', group: 'experts', agents: ['law', 'tax'] })] : []),
    delta('law', 'Legally ', ['lead', 'law']),
    delta('tax', 'Tax-wise ', ['lead', 'tax']),
    delta('tax', 'it is ', ['lead', 'tax']),
    delta('law', 'it is fine.', ['lead', 'law']),
    delta('tax', 'deductible.', ['lead', 'tax']),
    ...(withGroupEvents
      ? [
          engine({ type: 'parallel_member_end', group: 'experts', agentId: 'law', status: 'succeeded' }),
          engine({ type: 'parallel_member_end', group: 'experts', agentId: 'tax', status: 'succeeded' }),
          engine({ type: 'parallel_end', group: 'experts', succeeded: ['law', 'tax'] }),
        ]
      : []),
    engine({ type: 'handoff', from: 'lead', to: 'summary', via: 'parallel', handoffs: 1 }),
    delta('summary', 'Both agree.', ['lead', 'summary']),
    outcome('completed'),
  ];

  it('gives each member of a running group its own block while their deltas interleave', async () => {
    const stream = toUIMessageStream(turnOf(group(true)));
    const [forChunks, forReader] = stream.tee();
    const chunks = await chunksOf(forChunks);
    expectWellFormedBlocks(chunks);
    // The members' deltas really interleave on the wire.
    const deltaIds = chunks.flatMap((c) => (c.type === 'text-delta' ? [c.id] : []));
    expect(new Set(deltaIds.slice(1, 6)).size).toBe(2);
    const { message, errors } = await readMessage(forReader);
    expect(errors).toEqual([]);
    expect(texts(message)).toEqual([
      'Asking both.',
      'Legally it is fine.',
      'Tax-wise it is deductible.',
      'Both agree.',
    ]);
    expect(dataParts(message, 'data-handoff')).toEqual([{ from: 'lead', to: 'summary' }]);
  });

  it('tells members apart by their paths when the group events are not there', async () => {
    const { message } = await readMessage(toUIMessageStream(turnOf(group(false))));
    expect(texts(message)).toEqual([
      'Asking both.',
      'Legally it is fine.',
      'Tax-wise it is deductible.',
      'Both agree.',
    ]);
  });
});

describe('toUIMessageStream: tools', () => {
  const lookup: ToolCall = { id: 'c1', name: 'lookup', arguments: { word: 'signal' } };
  const search: ToolCall = { id: 'c2', name: 'search', arguments: { q: 'crew' } };
  const wipe: ToolCall = { id: 'c3', name: 'wipe', arguments: { all: true } };
  const result = (call: ToolCall, value: unknown, isError = false): TurnEvent =>
    engine({ type: 'tool_result', agentId: 'clerk', call, result: value, isError });

  it('maps results, errors and denials to tool parts in the matching state', async () => {
    const stream = toUIMessageStream(
      turnOf([
        agentResponse('clerk', '', [lookup, search, wipe]),
        engine({ type: 'tool_start', agentId: 'clerk', call: lookup }),
        result(lookup, { meaning: 'a text marker' }),
        engine({ type: 'tool_start', agentId: 'clerk', call: search }),
        result(search, new SignalyardError({ code: 'TOOL_FAILED', message: 'search is down' }), true),
        result(wipe, 'denied: not on a Friday', true),
        delta('clerk', 'Done.'),
        outcome('completed'),
      ]),
    );
    const [forChunks, forReader] = stream.tee();
    const chunks = await chunksOf(forChunks);
    // Every call's input goes out first, in the reply's order, once.
    expect(chunks.filter((c) => c.type === 'tool-input-available').map((c) => c.toolCallId)).toEqual([
      'c1',
      'c2',
      'c3',
    ]);
    const { message, errors } = await readMessage(forReader);
    expect(errors).toEqual([]);
    expect(toolParts(message)).toEqual([
      expect.objectContaining({
        type: 'tool-lookup',
        toolCallId: 'c1',
        state: 'output-available',
        input: { word: 'signal' },
        output: { meaning: 'a text marker' },
      }),
      expect.objectContaining({
        type: 'tool-search',
        toolCallId: 'c2',
        state: 'output-error',
        input: { q: 'crew' },
        errorText: 'search is down',
      }),
      expect.objectContaining({ type: 'tool-wipe', toolCallId: 'c3', state: 'output-denied', input: { all: true } }),
    ]);
  });

  it('reads the flat tool_result shape ({ toolCallId, name, content, isError }) too', async () => {
    const { message } = await readMessage(
      toUIMessageStream(
        turnOf([
          engine({
            type: 'tool_result',
            agentId: 'clerk',
            toolCallId: 'c9',
            name: 'now',
            content: '12:00',
            isError: false,
          }),
          engine({
            type: 'tool_result',
            agentId: 'clerk',
            toolCallId: 'c10',
            name: 'now',
            content: 'denied',
            isError: true,
          }),
          outcome('completed'),
        ]),
      ),
    );
    expect(toolParts(message)).toEqual([
      expect.objectContaining({ type: 'tool-now', toolCallId: 'c9', state: 'output-available', output: '12:00' }),
      expect.objectContaining({ type: 'tool-now', toolCallId: 'c10', state: 'output-denied' }),
    ]);
  });

  it('sends tool input and output as the JSON the wire carries', async () => {
    const call: ToolCall = {
      id: 'c1',
      name: 'clock',
      arguments: { at: new Date('2025-01-01T00:00:00Z'), skip: undefined },
    };
    const { message } = await readMessage(
      toUIMessageStream(turnOf([agentResponse('a', '', [call]), result(call, { big: 10n }), outcome('completed')])),
    );
    expect(toolParts(message)[0]).toMatchObject({
      input: { at: '2025-01-01T00:00:00.000Z' },
      output: 'an object',
    });
  });

  it('ends a tool error’s text at its message, never a stack', async () => {
    const error = new Error('disk full');
    const { message } = await readMessage(
      toUIMessageStream(turnOf([agentResponse('a', '', [lookup]), result(lookup, error, true), outcome('completed')])),
    );
    expect(toolParts(message)[0]).toMatchObject({ state: 'output-error', errorText: 'disk full' });
  });
});

describe('toUIMessageStream: approvals', () => {
  const transfer: ToolCall = { id: 'c1', name: 'transfer', arguments: { amount: 500, to: 'acme' } };
  const lookup: ToolCall = { id: 'c2', name: 'lookup', arguments: { who: 'acme' } };
  const firstTurn: readonly TurnEvent[] = [
    delta('clerk', 'I will pay acme.'),
    agentResponse('clerk', 'I will pay acme.', [lookup, transfer]),
    engine({ type: 'tool_start', agentId: 'clerk', call: lookup }),
    engine({ type: 'tool_result', agentId: 'clerk', call: lookup, result: { iban: 'X' }, isError: false }),
    engine({ type: 'approval_requested', agentId: 'clerk', approvals: [pendingApproval('ap-7', transfer)] }),
    outcome('paused', { pendingApprovals: [pendingApproval('ap-7', transfer)] }),
  ];

  it('turns a pending approval into a tool part in the approval-requested state with its approvalId', async () => {
    const stream = toUIMessageStream(turnOf(firstTurn), { messageId: 'm1' });
    const [forChunks, forReader] = stream.tee();
    const chunks = await chunksOf(forChunks);
    const input = chunks.findIndex((c) => c.type === 'tool-input-available' && c.toolCallId === 'c1');
    const request = chunks.findIndex((c) => c.type === 'tool-approval-request');
    expect(input).toBeGreaterThan(-1);
    expect(request).toBeGreaterThan(input);
    expect(chunks[request]).toEqual({ type: 'tool-approval-request', approvalId: 'ap-7', toolCallId: 'c1' });
    const { message, errors } = await readMessage(forReader);
    expect(errors).toEqual([]);
    expect(message?.id).toBe('m1');
    expect(toolParts(message)).toEqual([
      expect.objectContaining({ type: 'tool-lookup', state: 'output-available' }),
      expect.objectContaining({
        type: 'tool-transfer',
        toolCallId: 'c1',
        state: 'approval-requested',
        input: { amount: 500, to: 'acme' },
        approval: { id: 'ap-7' },
      }),
    ]);
  });

  it('sends the call’s input before the request when no agent_response carried it', async () => {
    const { message, errors } = await readMessage(
      toUIMessageStream(
        turnOf([
          engine({ type: 'approval_requested', agentId: 'clerk', approvals: [pendingApproval('ap-1', transfer)] }),
          outcome('paused'),
        ]),
      ),
    );
    expect(errors).toEqual([]);
    expect(toolParts(message)).toEqual([
      expect.objectContaining({ type: 'tool-transfer', state: 'approval-requested', approval: { id: 'ap-1' } }),
    ]);
  });

  it('continues the same assistant message in the turn that resumes after the approval', async () => {
    const first = (await readMessage(toUIMessageStream(turnOf(firstTurn), { messageId: 'm1' }))).message!;
    // What the AI SDK client's addToolApprovalResponse records.
    const answered: UIMessage = {
      ...first,
      parts: first.parts.map((p) =>
        isToolUIPart(p) && p.state === 'approval-requested'
          ? { ...p, state: 'approval-responded', approval: { id: p.approval.id, approved: true } }
          : p,
      ),
    };
    const resumed = turnOf([
      engine({ type: 'approval_resolved', agentId: 'clerk', id: 'ap-7', approved: true }),
      engine({ type: 'tool_start', agentId: 'clerk', call: transfer }),
      engine({ type: 'tool_result', agentId: 'clerk', call: transfer, result: { ok: true }, isError: false }),
      delta('clerk', 'Paid.'),
      agentResponse('clerk', 'Paid.'),
      outcome('completed'),
    ]);
    const { message, errors } = await readMessage(toUIMessageStream(resumed, { messageId: 'm1' }), answered);
    expect(errors).toEqual([]);
    expect(message?.id).toBe('m1');
    expect(texts(message)).toEqual(['I will pay acme.', 'Paid.']);
    expect(toolParts(message)).toEqual([
      expect.objectContaining({ type: 'tool-lookup', state: 'output-available' }),
      expect.objectContaining({
        type: 'tool-transfer',
        toolCallId: 'c1',
        state: 'output-available',
        output: { ok: true },
        approval: { id: 'ap-7', approved: true },
      }),
    ]);
    expect(message?.parts.filter(isToolUIPart)).toHaveLength(2);
  });

  it('marks a call a person denied as output-denied in the resumed turn', async () => {
    const resumed = turnOf([
      engine({ type: 'approval_requested', agentId: 'clerk', approvals: [pendingApproval('ap-7', transfer)] }),
      engine({ type: 'approval_resolved', agentId: 'clerk', id: 'ap-7', approved: false, reason: 'too much' }),
      engine({
        type: 'tool_result',
        agentId: 'clerk',
        call: transfer,
        result: 'refused by the reviewer',
        isError: true,
      }),
      outcome('completed'),
    ]);
    const { message } = await readMessage(toUIMessageStream(resumed));
    expect(toolParts(message)).toEqual([expect.objectContaining({ toolCallId: 'c1', state: 'output-denied' })]);
  });
});

describe('toUIMessageStream: outcomes, routing and iteration', () => {
  it('sends the route as a data-route part, unless sendRouting is false', async () => {
    const events = [routed, delta('a', 'hi'), outcome('completed')];
    const { message } = await readMessage(toUIMessageStream(turnOf(events)));
    expect(dataParts(message, 'data-route')).toEqual([
      { tier: 'agent', routeName: 'chat', action: { type: 'continue' } },
    ]);
    const quiet = await readMessage(toUIMessageStream(turnOf(events), { sendRouting: false }));
    expect(quiet.message?.parts.map((p) => p.type)).toEqual(['text']);
    const chunks = await chunksOf(toUIMessageStream(turnOf(events), { sendRouting: false }));
    expect(chunks.some((c) => c.type === 'data-route')).toBe(false);
  });

  it('sends only the route fields there are (an unrouted signal has no tier, route or action)', async () => {
    const unrouted: TurnEvent = { type: 'routed', sessionKey: 'k', agentId: 'a', action: undefined };
    const { message } = await readMessage(toUIMessageStream(turnOf([unrouted, outcome('unrouted')])));
    expect(dataParts(message, 'data-route')).toEqual([{}]);
  });

  it('turns a failed outcome into an error chunk with the error’s message, no stack, then finish', async () => {
    const error = new SignalyardError({ code: 'ENGINE_FAILED', message: 'Engine "support" failed: boom' });
    const chunks = await chunksOf(
      toUIMessageStream(turnOf([delta('a', 'Working'), outcome('failed', { error, action: { type: 'continue' } })])),
    );
    expect(chunks.slice(-3)).toEqual([
      { type: 'text-end', id: expect.any(String) as string },
      { type: 'error', errorText: 'Engine "support" failed: boom' },
      { type: 'finish' },
    ]);
    const { message, errors } = await readMessage(
      toUIMessageStream(turnOf([delta('a', 'Working'), outcome('failed', { error })])),
    );
    expect(errors.map((e) => e.message)).toEqual(['Engine "support" failed: boom']);
    expect(texts(message)).toEqual(['Working']);
    expect(JSON.stringify(chunks)).not.toContain('    at ');
  });

  it('turns a rejected outcome into a data-rejected part with the reason', async () => {
    const { message, errors } = await readMessage(
      toUIMessageStream(
        turnOf([routed, outcome('rejected', { action: { type: 'reject', reason: 'awaiting_approval' } })]),
      ),
    );
    expect(errors).toEqual([]);
    expect(dataParts(message, 'data-rejected')).toEqual([{ reason: 'awaiting_approval' }]);
    const refused = await readMessage(
      toUIMessageStream(
        turnOf([
          outcome('rejected', {
            action: { type: 'transition', target: 'pay' },
            error: new SignalyardError({
              code: 'FSM_INVALID_TRANSITION',
              message: 'Invalid transition from "idle" via "pay"',
            }),
          }),
        ]),
      ),
    );
    expect(dataParts(refused.message, 'data-rejected')).toEqual([
      { reason: 'Invalid transition from "idle" via "pay"' },
    ]);
  });

  it('sends the messageId with start', async () => {
    const chunks = await chunksOf(toUIMessageStream(turnOf([outcome('completed')]), { messageId: 'msg-42' }));
    expect(chunks).toEqual([{ type: 'start', messageId: 'msg-42' }, { type: 'finish' }]);
  });

  it('turns an iteration error of the turn into an error chunk, then closes', async () => {
    async function* misuse(): AsyncGenerator<TurnEvent> {
      yield delta('a', 'par');
      throw new SignalyardError({ code: 'RUNNER_CLOSED', message: 'The runner is closed' });
    }
    const chunks = await chunksOf(toUIMessageStream(misuse()));
    expect(chunks.map((c) => c.type)).toEqual(['start', 'text-start', 'text-delta', 'text-end', 'error']);
    expect(chunks.at(-1)).toEqual({ type: 'error', errorText: 'The runner is closed' });
    async function* rejectsAtOnce(): AsyncGenerator<TurnEvent> {
      yield* [];
      throw new SignalyardError({ code: 'RUNNER_INPUT_INVALID', message: 'Invalid message' });
    }
    const { errors } = await readMessage(toUIMessageStream(rejectsAtOnce()));
    expect(errors.map((e) => e.message)).toEqual(['Invalid message']);
  });

  it('closes open blocks and finishes a turn that ends without an outcome', async () => {
    const chunks = await chunksOf(toUIMessageStream(turnOf([delta('a', 'cut')])));
    expect(chunks.map((c) => c.type)).toEqual(['start', 'text-start', 'text-delta', 'text-end', 'finish']);
  });

  it('stops at the outcome: later events are not read and the turn’s iterator is returned', async () => {
    const turn = turnOf([outcome('completed'), delta('a', 'after the end')]);
    const chunks = await chunksOf(toUIMessageStream(turn));
    expect(chunks).toEqual([{ type: 'start' }, { type: 'finish' }]);
    expect(turn.read()).toBe(1);
    expect(turn.returned()).toBe(true);
  });

  it('stops reading the turn when the stream is cancelled (the iterator’s return() is called)', async () => {
    const turn = turnOf([delta('a', 'one'), delta('a', 'two'), delta('a', 'three'), outcome('completed')]);
    const reader = toUIMessageStream(turn).getReader();
    expect((await reader.read()).value).toEqual({ type: 'start' });
    expect((await reader.read()).value).toEqual({ type: 'text-start', id: expect.any(String) as string });
    await reader.cancel();
    expect(turn.returned()).toBe(true);
    expect(turn.read()).toBe(1);
  });

  it('cancels cleanly even when the turn’s return() throws or rejects', async () => {
    for (const failing of [
      () => {
        throw new Error('sync');
      },
      () => Promise.reject(new Error('async')),
    ]) {
      const turn: AsyncIterable<TurnEvent> = {
        [Symbol.asyncIterator]: () => ({
          next: async () => ({ done: false, value: delta('a', 'x') }),
          return: failing as () => Promise<IteratorResult<TurnEvent>>,
        }),
      };
      const reader = toUIMessageStream(turn).getReader();
      await reader.read();
      await reader.read();
      await expect(reader.cancel()).resolves.toBeUndefined();
    }
  });

  it('reads the turn only as the stream is read', async () => {
    const turn = turnOf([delta('a', 'one'), outcome('completed')]);
    const stream = toUIMessageStream(turn);
    await Promise.resolve();
    expect(turn.read()).toBe(0);
    await chunksOf(stream);
    expect(turn.read()).toBe(2);
  });

  it('runs an async generator’s finally when the stream is cancelled', async () => {
    let cleaned = false;
    async function* turn(): AsyncGenerator<TurnEvent> {
      try {
        yield delta('a', 'one');
        yield delta('a', 'two');
      } finally {
        cleaned = true;
      }
    }
    const reader = toUIMessageStream(turn()).getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    await Promise.resolve();
    expect(cleaned).toBe(true);
  });

  it('maps events it cannot read to nothing, and always ends with finish (property)', async () => {
    const junk = fc.oneof(
      fc.anything(),
      fc.record({ type: fc.constantFrom('text_delta', 'engine_event', 'routed', 'outcome'), delta: fc.anything() }),
      fc.record({
        type: fc.constant('engine_event'),
        event: fc.record({
          type: fc.constantFrom(
            'agent_response',
            'tool_result',
            'approval_requested',
            'handoff',
            'parallel_start',
            'x',
          ),
          toolCalls: fc.anything(),
          approvals: fc.anything(),
          call: fc.anything(),
          agents: fc.anything(),
        }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(junk, { maxLength: 8 }), async (events) => {
        const chunks = await chunksOf(toUIMessageStream(turnOf([...(events as TurnEvent[]), outcome('completed')])));
        expect(chunks[0]?.type).toBe('start');
        expect(chunks.at(-1)?.type).toBe('finish');
        expectWellFormedBlocks(chunks);
      }),
      { numRuns: 150 },
    );
  });
});

describe('toUIMessageStream: bad arguments', () => {
  const cases: readonly { name: string; turn: unknown; opts: unknown; path: string }[] = [
    { name: 'a turn that is not async iterable', turn: [1, 2], opts: undefined, path: 'turn' },
    { name: 'a sync iterable', turn: new Set<TurnEvent>(), opts: undefined, path: 'turn' },
    { name: 'no turn', turn: undefined, opts: undefined, path: 'turn' },
    { name: 'options that are not an object', turn: turnOf([]), opts: 'm1', path: 'opts' },
    { name: 'an empty messageId', turn: turnOf([]), opts: { messageId: '' }, path: 'opts.messageId' },
    { name: 'a numeric messageId', turn: turnOf([]), opts: { messageId: 7 }, path: 'opts.messageId' },
    {
      name: 'a sendRouting that is not a boolean',
      turn: turnOf([]),
      opts: { sendRouting: 'no' },
      path: 'opts.sendRouting',
    },
    { name: 'an unknown option', turn: turnOf([]), opts: { messageID: 'm1' }, path: 'opts.messageID' },
  ];
  for (const c of cases) {
    it(`rejects ${c.name} with UI_STREAM_ARGUMENT_INVALID at ${c.path}`, () => {
      let error: unknown;
      try {
        toUIMessageStream(c.turn as never, c.opts as never);
      } catch (e) {
        error = e;
      }
      expect(UIMessageError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'UI_STREAM_ARGUMENT_INVALID', path: c.path });
      expect((error as Error).message).toMatch(new RegExp(`at ${c.path.replace('.', '\\.')}: .*expected`));
    });
  }

  it('reads nothing from a turn whose options are bad', () => {
    const turn = turnOf([outcome('completed')]);
    expect(() => toUIMessageStream(turn, { sendRouting: 1 } as never)).toThrow(/sendRouting/);
    expect(() => toUIMessageStream(turn, { includeSignals: 'yes' } as never)).toThrow(
      /opts\.includeSignals: expected a boolean, got "yes"/,
    );
    expect(turn.read()).toBe(0);
  });
});

describe('types', () => {
  it('takes a turn and options and returns a ReadableStream of UIMessageChunks', () => {
    expectTypeOf(toUIMessageStream).parameter(0).toEqualTypeOf<AsyncIterable<TurnEvent>>();
    expectTypeOf(toUIMessageStream).parameter(1).toEqualTypeOf<ToUIMessageStreamOptions | undefined>();
    expectTypeOf(toUIMessageStream).returns.toEqualTypeOf<ReadableStream<UIMessageChunk>>();
    expectTypeOf<ToUIMessageStreamOptions>().toEqualTypeOf<{
      readonly messageId?: string;
      readonly sendRouting?: boolean;
      readonly includeSignals?: boolean;
    }>();
  });

  it('types the data parts of a SignalyardUIMessage', () => {
    type Part = SignalyardUIMessage['parts'][number];
    expectTypeOf<Extract<Part, { type: 'data-handoff' }>['data']>().toEqualTypeOf<HandoffData>();
    expectTypeOf<SignalyardUIMessage>().toExtend<UIMessage>();
  });
});
