import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ChatMessage } from '@signalyard/core';
import { MockLanguageModelV3 } from 'ai/test';
import { ModelRequestError, aiSdkModel } from '@signalyard/ai-sdk';
import { mockModel, rejectionOf, reply } from './support.js';

const lookupCall = { id: 'call-1', name: 'lookup', arguments: { word: 'signal' } };

describe('messages sent to the AI SDK', () => {
  it('sends system, user and assistant messages in order, with their text', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock).generate({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'Bye' },
      ],
    });
    expect(mock.doGenerateCalls).toHaveLength(1);
    expect(mock.doGenerateCalls[0]!.prompt).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Bye' }] },
    ]);
  });

  it('keeps a system message where it is in the list instead of moving it first', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock).generate({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'system', content: 'Now answer in French.' },
        { role: 'user', content: 'two' },
      ],
    });
    expect(mock.doGenerateCalls[0]!.prompt.map((m) => m.role)).toEqual(['user', 'system', 'user']);
  });

  it('sends an assistant message with toolCalls as a text part and one tool-call part per call', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock).generate({
      messages: [
        { role: 'user', content: 'Define signal and crew' },
        {
          role: 'assistant',
          content: 'Looking both up.',
          toolCalls: [lookupCall, { id: 'call-2', name: 'lookup', arguments: { word: 'crew' } }],
        },
        { role: 'tool', content: 'a text marker', toolCallId: 'call-1' },
        { role: 'tool', content: '{"meaning":"agents"}', toolCallId: 'call-2' },
      ],
    });
    const prompt = mock.doGenerateCalls[0]!.prompt;
    expect(prompt[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking both up.' },
        { type: 'tool-call', toolCallId: 'call-1', toolName: 'lookup', input: { word: 'signal' } },
        { type: 'tool-call', toolCallId: 'call-2', toolName: 'lookup', input: { word: 'crew' } },
      ],
    });
  });

  it('sends tool messages as tool-result parts with the name of the tool that was called and text output', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock).generate({
      messages: [
        { role: 'user', content: 'Define signal and crew' },
        { role: 'assistant', content: '', toolCalls: [lookupCall, { id: 'call-2', name: 'search', arguments: {} }] },
        { role: 'tool', content: 'a text marker', toolCallId: 'call-1' },
        { role: 'tool', content: '{"meaning":"agents"}', toolCallId: 'call-2' },
      ],
    });
    // The AI SDK merges consecutive tool messages into one provider message; parts keep their order.
    expect(mock.doGenerateCalls[0]!.prompt[2]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call-1',
          toolName: 'lookup',
          output: { type: 'text', value: 'a text marker' },
        },
        {
          type: 'tool-result',
          toolCallId: 'call-2',
          toolName: 'search',
          output: { type: 'text', value: '{"meaning":"agents"}' },
        },
      ],
    });
  });

  it('sends no empty text part for an assistant message that only calls tools', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock).generate({
      messages: [
        { role: 'user', content: 'Define signal' },
        { role: 'assistant', content: '', toolCalls: [lookupCall] },
        { role: 'tool', content: 'a text marker', toolCallId: 'call-1' },
      ],
    });
    expect(mock.doGenerateCalls[0]!.prompt[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'lookup', input: { word: 'signal' } }],
    });
  });

  it('treats an empty toolCalls list like no tool calls', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock).generate({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.', toolCalls: [] },
      ],
    });
    expect(mock.doGenerateCalls[0]!.prompt[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello.' }],
    });
  });

  it('takes the tool name from the most recent call with that id', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock).generate({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'first', arguments: {} }] },
        { role: 'tool', content: '1', toolCallId: 'c' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'second', arguments: {} }] },
        { role: 'tool', content: '2', toolCallId: 'c' },
      ],
    });
    const prompt = mock.doGenerateCalls[0]!.prompt;
    expect(prompt[2]).toMatchObject({ content: [{ toolName: 'first' }] });
    expect(prompt[4]).toMatchObject({ content: [{ toolName: 'second' }] });
  });

  it('does not send ChatMessage.name, which has no AI SDK counterpart', async () => {
    const mock = mockModel(reply('ok'));
    await aiSdkModel(mock).generate({
      messages: [
        { role: 'user', content: 'Hi', name: 'alice' },
        { role: 'assistant', content: 'Yo', name: 'teacher' },
      ],
    });
    expect(JSON.stringify(mock.doGenerateCalls[0]!.prompt)).not.toMatch(/alice|teacher/);
  });

  it('does not change the caller’s messages', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'x', toolCalls: [lookupCall] },
      { role: 'tool', content: 'r', toolCallId: 'call-1' },
    ];
    const before = structuredClone(messages);
    await aiSdkModel(mockModel(reply('ok'))).generate({ messages });
    expect(messages).toEqual(before);
  });

  it('maps any conversation of plain messages one for one, in order (property)', async () => {
    const message = fc.record({
      role: fc.constantFrom('system' as const, 'user' as const, 'assistant' as const),
      content: fc.string(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 12 }), async (messages) => {
        const mock = mockModel(reply('ok'));
        await aiSdkModel(mock).generate({ messages });
        const prompt = mock.doGenerateCalls[0]!.prompt;
        expect(prompt.map((m) => m.role)).toEqual(messages.map((m) => m.role));
        prompt.forEach((m, i) => {
          const text =
            m.role === 'system'
              ? m.content
              : (m.content as readonly { text?: string }[]).map((p) => p.text ?? '').join('');
          expect(text).toBe(messages[i]!.content);
        });
      }),
      { numRuns: 60 },
    );
  });
});

describe('malformed requests', () => {
  // Answers every call, so a junk request that happens to be valid still succeeds.
  const model = aiSdkModel(new MockLanguageModelV3({ doGenerate: async () => reply('ok') }));

  const cases: readonly { name: string; request: unknown; path: string; mentions: string }[] = [
    { name: 'a request that is not an object', request: 'hello', path: '', mentions: '"hello"' },
    { name: 'messages that are not a list', request: { messages: 'hi' }, path: 'messages', mentions: '"hi"' },
    { name: 'no messages at all', request: {}, path: 'messages', mentions: 'undefined' },
    { name: 'an empty message list', request: { messages: [] }, path: 'messages', mentions: 'empty' },
    { name: 'a message that is not an object', request: { messages: [null] }, path: 'messages[0]', mentions: 'null' },
    {
      name: 'an unknown role',
      request: { messages: [{ role: 'developer', content: 'x' }] },
      path: 'messages[0].role',
      mentions: '"developer"',
    },
    {
      name: 'content that is not a string',
      request: { messages: [{ role: 'user', content: 42 }] },
      path: 'messages[0].content',
      mentions: '42',
    },
    {
      name: 'toolCalls on a user message',
      request: { messages: [{ role: 'user', content: 'x', toolCalls: [lookupCall] }] },
      path: 'messages[0].toolCalls',
      mentions: '"user"',
    },
    {
      name: 'a toolCallId on an assistant message',
      request: { messages: [{ role: 'assistant', content: 'x', toolCallId: 'c' }] },
      path: 'messages[0].toolCallId',
      mentions: '"assistant"',
    },
    {
      name: 'toolCalls that are not a list',
      request: { messages: [{ role: 'assistant', content: 'x', toolCalls: 'lookup' }] },
      path: 'messages[0].toolCalls',
      mentions: '"lookup"',
    },
    {
      name: 'a tool call that is not an object',
      request: { messages: [{ role: 'assistant', content: 'x', toolCalls: [7] }] },
      path: 'messages[0].toolCalls[0]',
      mentions: '7',
    },
    {
      name: 'a tool call without an id',
      request: { messages: [{ role: 'assistant', content: 'x', toolCalls: [{ name: 'lookup', arguments: {} }] }] },
      path: 'messages[0].toolCalls[0].id',
      mentions: 'undefined',
    },
    {
      name: 'a tool call with an empty name',
      request: { messages: [{ role: 'assistant', content: 'x', toolCalls: [{ id: 'c', name: '', arguments: {} }] }] },
      path: 'messages[0].toolCalls[0].name',
      mentions: '""',
    },
    {
      name: 'a tool message without a toolCallId',
      request: {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', content: 'r' },
        ],
      },
      path: 'messages[1].toolCallId',
      mentions: 'undefined',
    },
    {
      name: 'a tool message answering a call id no assistant message made',
      request: {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', content: 'r', toolCallId: 'ghost' },
        ],
      },
      path: 'messages[1].toolCallId',
      mentions: '"ghost"',
    },
    {
      name: 'a tool message answering a call made later',
      request: {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 't', arguments: {} }] },
          { role: 'tool', content: 'r', toolCallId: 'a' },
          { role: 'tool', content: 'r', toolCallId: 'b' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'b', name: 't', arguments: {} }] },
        ],
      },
      path: 'messages[3].toolCallId',
      mentions: '"b"',
    },
    {
      name: 'a tool call left unanswered at the end',
      request: {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: '', toolCalls: [lookupCall] },
        ],
      },
      path: 'messages[1].toolCalls[0]',
      mentions: '"call-1"',
    },
    {
      name: 'a tool call left unanswered before the next user message',
      request: {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: '', toolCalls: [lookupCall, { id: 'call-2', name: 'lookup', arguments: {} }] },
          { role: 'tool', content: 'r', toolCallId: 'call-1' },
          { role: 'user', content: 'and?' },
        ],
      },
      path: 'messages[1].toolCalls[1]',
      mentions: 'before messages[3]',
    },
    {
      name: 'tools that are not a list',
      request: { messages: [{ role: 'user', content: 'x' }], tools: {} },
      path: 'tools',
      mentions: '{}',
    },
    {
      name: 'a tool spec that is not an object',
      request: { messages: [{ role: 'user', content: 'x' }], tools: [null] },
      path: 'tools[0]',
      mentions: 'null',
    },
    {
      name: 'a tool spec without a name',
      request: { messages: [{ role: 'user', content: 'x' }], tools: [{ parameters: {} }] },
      path: 'tools[0].name',
      mentions: 'undefined',
    },
    {
      name: 'a tool spec with a non-string description',
      request: { messages: [{ role: 'user', content: 'x' }], tools: [{ name: 't', description: 3, parameters: {} }] },
      path: 'tools[0].description',
      mentions: '3',
    },
    {
      name: 'a tool spec whose parameters are not an object',
      request: { messages: [{ role: 'user', content: 'x' }], tools: [{ name: 't', parameters: [] }] },
      path: 'tools[0].parameters',
      mentions: '[]',
    },
    {
      name: 'two tool specs with the same name',
      request: {
        messages: [{ role: 'user', content: 'x' }],
        tools: [
          { name: 't', parameters: {} },
          { name: 't', parameters: {} },
        ],
      },
      path: 'tools[1].name',
      mentions: '"t"',
    },
    {
      name: 'an abortSignal that is not an AbortSignal',
      request: { messages: [{ role: 'user', content: 'x' }], abortSignal: true },
      path: 'abortSignal',
      mentions: 'true',
    },
  ];

  for (const c of cases) {
    it(`rejects ${c.name} with MODEL_REQUEST_INVALID at ${c.path === '' ? 'the request' : c.path}, sending nothing`, async () => {
      const mock = mockModel(reply('never sent'));
      const error = await rejectionOf(aiSdkModel(mock).generate(c.request as never));
      expect(ModelRequestError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'MODEL_REQUEST_INVALID', path: c.path });
      expect((error as Error).message).toContain(c.mentions);
      expect(mock.doGenerateCalls).toHaveLength(0);
    });
  }

  it('rejects null and undefined requests with MODEL_REQUEST_INVALID, never a TypeError', async () => {
    for (const request of [null, undefined]) {
      const error = await rejectionOf(model.generate(request as never));
      expect(error).toMatchObject({ code: 'MODEL_REQUEST_INVALID', path: '' });
    }
  });

  it('rejects arbitrary junk only with MODEL_REQUEST_INVALID (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), fc.anything(), async (messages, tools) => {
        try {
          await model.generate({ messages, tools } as never);
        } catch (error) {
          expect(error).toMatchObject({ code: 'MODEL_REQUEST_INVALID' });
        }
      }),
      { numRuns: 200 },
    );
  });
});
