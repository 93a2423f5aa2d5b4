import { describe, expect, expectTypeOf, it } from 'vitest';
import { SignalyardError, type ApprovalDecision } from '@signalyard/core';
import type { UIMessage } from 'ai';
import { ModelCallError, ModelRequestError, UIMessageError, approvalsFromUIMessages } from '@signalyard/ai-sdk';

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

const responded = (toolCallId: string, approval: { id: string; approved: boolean; reason?: string }) =>
  ({ type: 'tool-transfer', toolCallId, state: 'approval-responded', input: {}, approval }) as const;

describe('approvalsFromUIMessages', () => {
  it('reads every responded approval of the last assistant message, in part order', () => {
    const messages: UIMessage[] = [
      user('u1', 'Pay both'),
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'text', text: 'I need two approvals.' },
          responded('c1', { id: 'ap-1', approved: true }),
          {
            type: 'dynamic-tool',
            toolName: 'refund',
            toolCallId: 'c2',
            state: 'approval-responded',
            input: {},
            approval: { id: 'ap-2', approved: false, reason: 'too much' },
          },
        ],
      },
    ];
    expect(approvalsFromUIMessages(messages)).toEqual([
      { id: 'ap-1', approved: true },
      { id: 'ap-2', approved: false, reason: 'too much' },
    ]);
  });

  it('ignores parts without a response: requested, already run or denied, other parts', () => {
    const messages: UIMessage[] = [
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'tool-transfer', toolCallId: 'c1', state: 'approval-requested', input: {}, approval: { id: 'ap-1' } },
          {
            type: 'tool-transfer',
            toolCallId: 'c2',
            state: 'output-available',
            input: {},
            output: 'ok',
            approval: { id: 'ap-2', approved: true },
          },
          {
            type: 'tool-wipe',
            toolCallId: 'c3',
            state: 'output-denied',
            input: {},
            approval: { id: 'ap-3', approved: false },
          },
          { type: 'tool-lookup', toolCallId: 'c4', state: 'input-available', input: {} },
          { type: 'data-route', data: { state: 'approval-responded' } },
          responded('c5', { id: 'ap-5', approved: true }),
        ],
      },
    ];
    expect(approvalsFromUIMessages(messages)).toEqual([{ id: 'ap-5', approved: true }]);
  });

  it('reads only the last assistant message, even with a user message after it', () => {
    const messages: UIMessage[] = [
      { id: 'a0', role: 'assistant', parts: [responded('c0', { id: 'ap-0', approved: true })] },
      user('u1', 'and?'),
      { id: 'a1', role: 'assistant', parts: [responded('c1', { id: 'ap-1', approved: false })] },
      user('u2', 'Go on'),
    ];
    expect(approvalsFromUIMessages(messages)).toEqual([{ id: 'ap-1', approved: false }]);
    expect(approvalsFromUIMessages(messages.slice(0, 2))).toEqual([{ id: 'ap-0', approved: true }]);
  });

  it('returns no decisions without an assistant message', () => {
    expect(approvalsFromUIMessages([])).toEqual([]);
    expect(approvalsFromUIMessages([user('u1', 'hi')])).toEqual([]);
  });

  it('treats a null reason as none', () => {
    const messages = [
      { id: 'a1', role: 'assistant', parts: [responded('c1', { id: 'ap-1', approved: true, reason: null as never })] },
    ] as UIMessage[];
    expect(approvalsFromUIMessages(messages)).toEqual([{ id: 'ap-1', approved: true }]);
  });

  const assistant = (parts: unknown): unknown[] => [{ id: 'a1', role: 'assistant', parts }];
  const bad: readonly { name: string; input: unknown; path: string }[] = [
    { name: 'messages that are not a list', input: { messages: [] }, path: 'messages' },
    { name: 'a message that is not an object', input: [null], path: 'messages[0]' },
    { name: 'a message without a role', input: [{ id: 'x', parts: [] }], path: 'messages[0].role' },
    { name: 'an assistant message without parts', input: [{ id: 'a1', role: 'assistant' }], path: 'messages[0].parts' },
    { name: 'a part that is not an object', input: assistant(['text']), path: 'messages[0].parts[0]' },
    {
      name: 'a responded part without its approval',
      input: assistant([{ type: 'tool-t', toolCallId: 'c', state: 'approval-responded', input: {} }]),
      path: 'messages[0].parts[0].approval',
    },
    {
      name: 'an approval without an id',
      input: assistant([
        { type: 'tool-t', toolCallId: 'c', state: 'approval-responded', approval: { approved: true } },
      ]),
      path: 'messages[0].parts[0].approval.id',
    },
    {
      name: 'an approval whose approved is not a boolean',
      input: assistant([
        { type: 'tool-t', toolCallId: 'c', state: 'approval-responded', approval: { id: 'ap-1', approved: 'yes' } },
      ]),
      path: 'messages[0].parts[0].approval.approved',
    },
    {
      name: 'an approval with a numeric reason',
      input: assistant([
        {
          type: 'tool-t',
          toolCallId: 'c',
          state: 'approval-responded',
          approval: { id: 'ap-1', approved: true, reason: 4 },
        },
      ]),
      path: 'messages[0].parts[0].approval.reason',
    },
    {
      name: 'two answers for one approval',
      input: assistant([
        responded('c1', { id: 'ap-1', approved: true }),
        responded('c2', { id: 'ap-1', approved: false }),
      ]),
      path: 'messages[0].parts[1].approval.id',
    },
  ];
  for (const c of bad) {
    it(`rejects ${c.name} with UI_MESSAGES_INVALID at ${c.path}`, () => {
      let error: unknown;
      try {
        approvalsFromUIMessages(c.input as never);
      } catch (e) {
        error = e;
      }
      expect(UIMessageError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'UI_MESSAGES_INVALID', path: c.path });
      expect((error as Error).message).toMatch(/^Invalid UI messages at .+: /);
    });
  }

  it('names both parts when an approval is answered twice', () => {
    expect(() =>
      approvalsFromUIMessages(
        assistant([
          responded('c1', { id: 'ap-1', approved: true }),
          responded('c2', { id: 'ap-1', approved: true }),
        ]) as never,
      ),
    ).toThrow('approval "ap-1" is answered twice (also at messages[0].parts[0])');
  });

  it('takes UIMessages and returns ApprovalDecisions', () => {
    expectTypeOf(approvalsFromUIMessages).parameter(0).toEqualTypeOf<readonly UIMessage[]>();
    expectTypeOf(approvalsFromUIMessages).returns.toEqualTypeOf<ApprovalDecision[]>();
  });
});

describe('UIMessageError', () => {
  class AppUIMessageError extends UIMessageError {}
  const error = new UIMessageError({ code: 'UI_MESSAGES_INVALID', path: 'messages', problem: 'bad' });

  it('isInstance matches its own instances and subclasses only', () => {
    expect(UIMessageError.isInstance(error)).toBe(true);
    expect(
      UIMessageError.isInstance(new AppUIMessageError({ code: 'UI_TRANSCRIPT_INVALID', path: '', problem: 'p' })),
    ).toBe(true);
    expect(UIMessageError.isInstance(new ModelRequestError({ path: '', problem: 'p' }))).toBe(false);
    expect(UIMessageError.isInstance(new ModelCallError({ model: 'm', cause: 1 }))).toBe(false);
    expect(UIMessageError.isInstance(new SignalyardError({ code: 'UI_MESSAGES_INVALID', message: 'm' }))).toBe(false);
    expect(UIMessageError.isInstance(new Error('x'))).toBe(false);
    expect(UIMessageError.isInstance(undefined)).toBe(false);
  });

  it('is a SignalyardError with its code, class name, path and message', () => {
    expect(SignalyardError.isInstance(error)).toBe(true);
    expect([error.name, error.code, error.path]).toEqual(['UIMessageError', 'UI_MESSAGES_INVALID', 'messages']);
    expect(error.message).toBe('Invalid UI messages at messages: bad');
    expect(new UIMessageError({ code: 'UI_STREAM_ARGUMENT_INVALID', path: '', problem: 'p' }).message).toBe(
      'Invalid argument to the UI message stream: p',
    );
    expect(new UIMessageError({ code: 'UI_TRANSCRIPT_INVALID', path: 'transcript', problem: 'p' }).message).toBe(
      'Invalid transcript at transcript: p',
    );
  });
});
