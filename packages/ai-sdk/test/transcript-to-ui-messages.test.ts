import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ToolCall, TranscriptEntry } from '@signalyard/core';
import { isToolUIPart, validateUIMessages, type UIMessage } from 'ai';
import { UIMessageError, toUIMessageStream, transcriptToUIMessages } from '@signalyard/ai-sdk';
import { agentResponse, delta, engine, handoff, outcome, pendingApproval, readMessage, turnOf } from './ui-support.js';

const lookup: ToolCall = { id: 'c1', name: 'lookup', arguments: { word: 'signal' } };
const search: ToolCall = { id: 'c2', name: 'search', arguments: { q: 'crew' } };
const wipe: ToolCall = { id: 'c3', name: 'wipe', arguments: { all: true } };
const transfer: ToolCall = { id: 'c4', name: 'transfer', arguments: { amount: 500 } };

const transcript: readonly TranscriptEntry[] = [
  { type: 'user', text: 'What is a signal?', at: '2025-01-01T10:00:00.000Z' },
  { type: 'assistant', agentId: 'triage', text: 'Let me get the clerk.' },
  { type: 'handoff', from: 'triage', to: 'clerk', via: 'signal' },
  { type: 'tool', call: lookup, status: 'done', result: { meaning: 'a text marker' } },
  { type: 'assistant', agentId: 'clerk', text: 'A signal is a text marker.' },
  { type: 'user', text: 'Clean up and pay acme.' },
  { type: 'tool', call: search, status: 'error', result: 'Error: search is down' },
  { type: 'tool', call: wipe, status: 'denied', result: 'denied: never on a Friday', approvalId: 'ap-1' },
  { type: 'tool', call: transfer, status: 'pending_approval', approvalId: 'ap-2' },
];

describe('transcriptToUIMessages', () => {
  it('rebuilds user messages and one assistant message per run of agent entries', () => {
    expect(transcriptToUIMessages(transcript)).toEqual([
      {
        id: 'msg-0',
        role: 'user',
        metadata: { at: '2025-01-01T10:00:00.000Z' },
        parts: [{ type: 'text', text: 'What is a signal?' }],
      },
      {
        id: 'msg-1',
        role: 'assistant',
        parts: [
          { type: 'text', text: 'Let me get the clerk.', state: 'done' },
          { type: 'data-handoff', data: { from: 'triage', to: 'clerk' } },
          {
            type: 'tool-lookup',
            toolCallId: 'c1',
            state: 'output-available',
            input: { word: 'signal' },
            output: { meaning: 'a text marker' },
          },
          { type: 'text', text: 'A signal is a text marker.', state: 'done' },
        ],
      },
      { id: 'msg-5', role: 'user', parts: [{ type: 'text', text: 'Clean up and pay acme.' }] },
      {
        id: 'msg-6',
        role: 'assistant',
        parts: [
          {
            type: 'tool-search',
            toolCallId: 'c2',
            state: 'output-error',
            input: { q: 'crew' },
            errorText: 'Error: search is down',
          },
          {
            type: 'tool-wipe',
            toolCallId: 'c3',
            state: 'output-denied',
            input: { all: true },
            approval: { id: 'ap-1', approved: false, reason: 'never on a Friday' },
          },
          {
            type: 'tool-transfer',
            toolCallId: 'c4',
            state: 'approval-requested',
            input: { amount: 500 },
            approval: { id: 'ap-2' },
          },
        ],
      },
    ]);
  });

  it('derives ids from the entries, so a reload renders the same keys', () => {
    const first = transcriptToUIMessages(transcript);
    const second = transcriptToUIMessages(structuredClone(transcript));
    expect(second).toEqual(first);
    expect(new Set(first.map((m) => m.id)).size).toBe(first.length);
    // A conversation that grows keeps the ids it had.
    const grown = transcriptToUIMessages([...transcript, { type: 'user', text: 'thanks' }]);
    expect(grown.slice(0, first.length).map((m) => m.id)).toEqual(first.map((m) => m.id));
  });

  it('produces messages the AI SDK’s own validateUIMessages accepts', async () => {
    await expect(validateUIMessages({ messages: transcriptToUIMessages(transcript) })).resolves.toHaveLength(4);
  });

  it('marks a call that ran after an approval as approved, and leaves the approval out without an id', () => {
    const [message] = transcriptToUIMessages([
      { type: 'tool', call: transfer, status: 'done', result: { paid: 500 }, approvalId: 'ap-9' },
      { type: 'tool', call: search, status: 'error', result: new Error('timeout'), approvalId: 'ap-10' },
      { type: 'tool', call: wipe, status: 'denied', result: 'denied' },
    ]);
    expect(message?.parts).toEqual([
      expect.objectContaining({ state: 'output-available', approval: { id: 'ap-9', approved: true } }),
      expect.objectContaining({
        state: 'output-error',
        errorText: 'timeout',
        approval: { id: 'ap-10', approved: true },
      }),
      { type: 'tool-wipe', toolCallId: 'c3', state: 'output-denied', input: { all: true } },
    ]);
  });

  it('leaves out empty replies, and an assistant message with nothing to show', () => {
    expect(
      transcriptToUIMessages([
        { type: 'user', text: 'hi' },
        { type: 'assistant', agentId: 'a', text: '' },
        { type: 'user', text: 'anyone?' },
      ]),
    ).toEqual([
      { id: 'msg-0', role: 'user', parts: [{ type: 'text', text: 'hi' }] },
      { id: 'msg-2', role: 'user', parts: [{ type: 'text', text: 'anyone?' }] },
    ]);
    expect(transcriptToUIMessages([])).toEqual([]);
  });

  it("a handoff part is { from, to } (with a parallel member's group): no via, no marker", () => {
    const entries = [
      { type: 'handoff', from: 'triage', to: 'clerk', via: 'signal' },
      { type: 'handoff', from: 'lead', to: 'tax', via: 'parallel', group: 'experts' },
    ] as TranscriptEntry[];
    const [message] = transcriptToUIMessages(entries);
    expect(message?.parts).toEqual([
      { type: 'data-handoff', data: { from: 'triage', to: 'clerk' } },
      { type: 'data-handoff', data: { from: 'lead', to: 'tax', group: 'experts' } },
    ]);
  });

  it('gives a reload the same parts the live stream gave', async () => {
    const live = await readMessage(
      toUIMessageStream(
        turnOf([
          delta('triage', 'Let me get ', ['triage']),
          delta('triage', 'the clerk.', ['triage']),
          agentResponse('triage', 'Let me get the clerk. [CLERK]'),
          handoff('triage', 'clerk', '[CLERK]'),
          agentResponse('clerk', '', [lookup]),
          engine({
            type: 'tool_result',
            agentId: 'clerk',
            call: lookup,
            result: { meaning: 'a text marker' },
            isError: false,
          }),
          delta('clerk', 'A signal is a text marker.', ['triage', 'clerk']),
          agentResponse('clerk', 'A signal is a text marker.', [transfer]),
          engine({ type: 'approval_requested', agentId: 'clerk', approvals: [pendingApproval('ap-2', transfer)] }),
          outcome('paused'),
        ]),
        { sendRouting: false },
      ),
    );
    const [reloaded] = transcriptToUIMessages([
      { type: 'assistant', agentId: 'triage', text: 'Let me get the clerk.' },
      { type: 'handoff', from: 'triage', to: 'clerk', via: 'signal' },
      { type: 'tool', call: lookup, status: 'done', result: { meaning: 'a text marker' } },
      { type: 'assistant', agentId: 'clerk', text: 'A signal is a text marker.' },
      { type: 'tool', call: transfer, status: 'pending_approval', approvalId: 'ap-2' },
    ]);
    const shape = (m: UIMessage | undefined) =>
      m?.parts.map((p) =>
        p.type === 'text'
          ? { type: p.type, text: p.text }
          : isToolUIPart(p)
            ? { type: p.type, state: p.state, input: p.input, output: p.output, approval: p.approval }
            : { type: p.type, ...('data' in p && { data: p.data }) },
      );
    expect(shape(reloaded)).toEqual(shape(live.message));
  });

  const bad: readonly { name: string; input: unknown; path: string }[] = [
    { name: 'a transcript that is not a list', input: { entries: [] }, path: 'transcript' },
    { name: 'an entry that is not an object', input: ['hi'], path: 'transcript[0]' },
    { name: 'an entry of unknown type', input: [{ type: 'system', text: 'x' }], path: 'transcript[0].type' },
    { name: 'a user entry without text', input: [{ type: 'user' }], path: 'transcript[0].text' },
    { name: 'a user entry with a numeric at', input: [{ type: 'user', text: 'x', at: 5 }], path: 'transcript[0].at' },
    {
      name: 'an assistant entry without agentId',
      input: [{ type: 'assistant', text: 'x' }],
      path: 'transcript[0].agentId',
    },
    {
      name: 'a handoff with a numeric group',
      input: [{ type: 'handoff', from: 'a', to: 'b', via: 'parallel', group: 7 }],
      path: 'transcript[0].group',
    },
    {
      name: 'a handoff with an unknown via',
      input: [{ type: 'handoff', from: 'a', to: 'b', via: 'magic' }],
      path: 'transcript[0].via',
    },
    { name: 'a tool entry without a call', input: [{ type: 'tool', status: 'done' }], path: 'transcript[0].call' },
    {
      name: 'a tool entry with an unknown status',
      input: [{ type: 'tool', call: lookup, status: 'running' }],
      path: 'transcript[0].status',
    },
    {
      name: 'a pending approval without approvalId',
      input: [{ type: 'tool', call: lookup, status: 'pending_approval' }],
      path: 'transcript[0].approvalId',
    },
    {
      name: 'an empty approvalId',
      input: [{ type: 'tool', call: lookup, status: 'done', approvalId: '' }],
      path: 'transcript[0].approvalId',
    },
  ];
  for (const c of bad) {
    it(`rejects ${c.name} with UI_TRANSCRIPT_INVALID at ${c.path}`, () => {
      let error: unknown;
      try {
        transcriptToUIMessages(c.input as never);
      } catch (e) {
        error = e;
      }
      expect(UIMessageError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'UI_TRANSCRIPT_INVALID', path: c.path });
      expect((error as Error).message).toMatch(/^Invalid transcript at .+: /);
    });
  }

  it('takes transcript entries and returns UIMessages', () => {
    expectTypeOf(transcriptToUIMessages).parameter(0).toEqualTypeOf<readonly TranscriptEntry[]>();
    expectTypeOf(transcriptToUIMessages).returns.toEqualTypeOf<UIMessage[]>();
  });
});
