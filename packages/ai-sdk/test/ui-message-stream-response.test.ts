import { describe, expect, it } from 'vitest';
import type { ApprovalDecision, ToolCall, TurnEvent } from '@signalyard/core';
import { DefaultChatTransport, UI_MESSAGE_STREAM_HEADERS, isToolUIPart, type UIMessage } from 'ai';
import {
  UIMessageError,
  approvalsFromUIMessages,
  toUIMessageStreamResponse,
  type ToUIMessageStreamResponseInit,
} from '@signalyard/ai-sdk';
import {
  TestChat,
  agentResponse,
  delta,
  engine,
  handoff,
  outcome,
  pendingApproval,
  routed,
  texts,
  turnOf,
} from './ui-support.js';

/** The AI SDK client's own transport, reading our Response as it would over HTTP. */
const transportFor = (handler: (request: Request) => Promise<Response>): DefaultChatTransport<UIMessage> =>
  new DefaultChatTransport({
    api: 'http://localhost/api/chat',
    fetch: async (input, init) => handler(new Request(input, init)),
  });

describe('toUIMessageStreamResponse', () => {
  it('answers with the AI SDK’s UI message stream headers and an SSE body', async () => {
    const response = toUIMessageStreamResponse(turnOf([delta('a', 'Hi'), outcome('completed')]));
    expect(response.status).toBe(200);
    for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS))
      expect(response.headers.get(name)).toBe(value);
    const body = await response.text();
    expect(body.startsWith('data: {"type":"start"}')).toBe(true);
    expect(body).toContain('data: {"type":"text-delta"');
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('applies status, statusText and headers of the init, and the stream options', async () => {
    const init: ToUIMessageStreamResponseInit = {
      status: 201,
      statusText: 'Created',
      headers: { 'x-session': 's1', 'cache-control': 'no-store' },
      messageId: 'm9',
      sendRouting: false,
    };
    const response = toUIMessageStreamResponse(turnOf([routed, outcome('completed')]), init);
    expect([response.status, response.statusText]).toEqual([201, 'Created']);
    expect(response.headers.get('x-session')).toBe('s1');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const body = await response.text();
    expect(body).toContain('{"type":"start","messageId":"m9"}');
    expect(body).not.toContain('data-route');
  });

  it('rejects bad arguments with UI_STREAM_ARGUMENT_INVALID, reading nothing', () => {
    const turn = turnOf([outcome('completed')]);
    for (const [args, path] of [
      [[{}], 'turn'],
      [[turn, 'fast'], 'init'],
      [[turn, null], 'init'],
      [[turn, { messageId: 3 }], 'init.messageId'],
      [[turn, { status: 200, sendRouting: 'yes' }], 'init.sendRouting'],
    ] as const) {
      let error: unknown;
      try {
        toUIMessageStreamResponse(...(args as unknown as [never, never]));
      } catch (e) {
        error = e;
      }
      expect(UIMessageError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'UI_STREAM_ARGUMENT_INVALID', path });
    }
    expect(turn.read()).toBe(0);
  });

  it('stops reading the turn when the client goes away (the body is cancelled)', async () => {
    const turn = turnOf([delta('a', 'one'), delta('a', 'two'), outcome('completed')]);
    const response = toUIMessageStreamResponse(turn);
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    // The cancel travels back through the SSE pipes: wait for it to reach the turn.
    await turn.whenReturned;
    expect(turn.read()).toBeLessThan(3); // the outcome was never read
  });
});

describe('the AI SDK client against a Signalyard handler', () => {
  const transfer: ToolCall = { id: 'c1', name: 'transfer', arguments: { amount: 500 } };

  /** A fetch-style chat endpoint: the first request asks for an approval, the next one resumes. */
  function chatEndpoint(): { handler: (request: Request) => Promise<Response>; decisions: ApprovalDecision[][] } {
    const decisions: ApprovalDecision[][] = [];
    const handler = async (request: Request): Promise<Response> => {
      const { messages } = (await request.json()) as { messages: UIMessage[] };
      const answered = approvalsFromUIMessages(messages);
      if (answered.length === 0) {
        // A new user message: a crew turn that hands off, then holds a tool call for approval.
        return toUIMessageStreamResponse(
          turnOf([
            routed,
            delta('triage', 'Passing you to payments.'),
            agentResponse('triage', 'Passing you to payments. [PAY]'),
            handoff('triage', 'payments', '[PAY]'),
            delta('payments', 'I need approval to pay.'),
            agentResponse('payments', 'I need approval to pay.', [transfer]),
            engine({ type: 'approval_requested', agentId: 'payments', approvals: [pendingApproval('ap-1', transfer)] }),
            outcome('paused'),
          ]),
          { messageId: 'assistant-1' },
        );
      }
      decisions.push(answered);
      const lastAssistant = messages.findLast((m) => m.role === 'assistant');
      const approved = answered[0]?.approved === true;
      const resumed: TurnEvent[] = [
        engine({ type: 'approval_resolved', agentId: 'payments', id: 'ap-1', approved }),
        engine({
          type: 'tool_result',
          agentId: 'payments',
          call: transfer,
          result: approved ? { paid: 500 } : 'denied: not today',
          isError: !approved,
        }),
        delta('payments', approved ? 'Paid.' : 'Not paid.'),
        outcome('completed'),
      ];
      return toUIMessageStreamResponse(turnOf(resumed), { messageId: lastAssistant!.id });
    };
    return { handler, decisions };
  }

  it('renders the turn, records the approval in the browser and continues the same message after it', async () => {
    const endpoint = chatEndpoint();
    const chat = new TestChat({ transport: transportFor(endpoint.handler) });
    await chat.sendMessage({ text: 'Pay acme 500' });
    expect(chat.status).toBe('ready');
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    const assistant = chat.messages[1]!;
    expect(assistant.id).toBe('assistant-1');
    expect(texts(assistant)).toEqual(['Passing you to payments.', 'I need approval to pay.']);
    expect(assistant.parts.find((p) => p.type === 'data-handoff')).toMatchObject({
      data: { from: 'triage', to: 'payments' },
    });
    const tool = assistant.parts.find(isToolUIPart);
    expect(tool).toMatchObject({ type: 'tool-transfer', state: 'approval-requested', approval: { id: 'ap-1' } });

    // The person clicks "Approve" in the browser.
    await chat.addToolApprovalResponse({ id: 'ap-1', approved: true, reason: 'looks right' });
    expect(approvalsFromUIMessages(chat.messages)).toEqual([{ id: 'ap-1', approved: true, reason: 'looks right' }]);
    await chat.sendMessage();

    expect(endpoint.decisions).toEqual([[{ id: 'ap-1', approved: true, reason: 'looks right' }]]);
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    const continued = chat.messages[1]!;
    expect(continued.id).toBe('assistant-1');
    expect(texts(continued)).toEqual(['Passing you to payments.', 'I need approval to pay.', 'Paid.']);
    expect(continued.parts.filter(isToolUIPart)).toEqual([
      expect.objectContaining({
        type: 'tool-transfer',
        state: 'output-available',
        output: { paid: 500 },
        approval: expect.objectContaining({ id: 'ap-1', approved: true }) as unknown,
      }),
    ]);
    // Nothing is left to decide: the next request carries no decisions.
    expect(approvalsFromUIMessages(chat.messages)).toEqual([]);
  });

  it('shows a denied call as output-denied once the resumed turn ran', async () => {
    const endpoint = chatEndpoint();
    const chat = new TestChat({ transport: transportFor(endpoint.handler) });
    await chat.sendMessage({ text: 'Pay acme 500' });
    await chat.addToolApprovalResponse({ id: 'ap-1', approved: false, reason: 'not today' });
    await chat.sendMessage();
    expect(endpoint.decisions).toEqual([[{ id: 'ap-1', approved: false, reason: 'not today' }]]);
    const continued = chat.messages[1]!;
    expect(continued.parts.find(isToolUIPart)).toMatchObject({ state: 'output-denied', approval: { approved: false } });
    expect(texts(continued).at(-1)).toBe('Not paid.');
  });

  it('reports a failed turn through the client’s error state', async () => {
    const chat = new TestChat({
      transport: transportFor(async () =>
        toUIMessageStreamResponse(
          turnOf([
            delta('a', 'Start'),
            outcome('failed', {
              error: Object.assign(new Error('Model call to "gpt" failed: HTTP 500'), {
                code: 'ENGINE_FAILED',
              }) as never,
            }),
          ]),
        ),
      ),
    });
    await chat.sendMessage({ text: 'hi' });
    expect(chat.status).toBe('error');
    expect(chat.error?.message).toBe('Model call to "gpt" failed: HTTP 500');
  });
});
