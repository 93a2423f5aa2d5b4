import { describe, expect, it } from 'vitest';
import type { TurnEvent } from '@signalyard/core';
import { DefaultChatTransport, UI_MESSAGE_STREAM_HEADERS, type UIMessage } from 'ai';
import {
  UIMessageError,
  resumeUIMessageStream,
  resumeUIMessageStreamResponse,
  toUIMessageStream,
  toUIMessageStreamResponse,
  type TurnStreamResumer,
} from '@signalyard/ai-sdk';
import { TestChat, chunksOf, delta, outcome, readMessage, routed, texts, turnOf } from './ui-support.js';

const KEY = 'agent:support:web:dm:42';
const restarted = (attempt: number): TurnEvent => ({ type: 'restarted', attempt });

/** A runner whose `resumeStream` serves `events` (none: nothing in flight), recording its calls. */
function runnerOf(events: readonly TurnEvent[]): TurnStreamResumer & {
  calls: unknown[];
  turn: ReturnType<typeof turnOf> | undefined;
} {
  const runner = {
    calls: [] as unknown[],
    turn: undefined as ReturnType<typeof turnOf> | undefined,
    resumeStream(ref: { sessionKey: string }) {
      runner.calls.push(ref);
      runner.turn = turnOf(events);
      return runner.turn;
    },
  };
  return runner;
}

const expectInvalid = (run: () => unknown, path: string, says: RegExp): void => {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(UIMessageError.isInstance(caught)).toBe(true);
  const error = caught as UIMessageError;
  expect(error.code).toBe('UI_STREAM_ARGUMENT_INVALID');
  expect(error.path).toBe(path);
  expect(error.message).toMatch(says);
};

describe('toUIMessageStream on a restarted turn', () => {
  it('ends the UI stream without finish: the open text block ends, nothing after restarted is read', async () => {
    const turn = turnOf([
      routed,
      delta('billing', 'Half of a rep'),
      restarted(2),
      delta('billing', 'The whole new reply.'),
      outcome('completed'),
    ]);
    const chunks = await chunksOf(toUIMessageStream(turn, { messageId: 'm1', sendRouting: false }));
    expect(chunks.map((c) => c.type)).toEqual(['start', 'text-start', 'text-delta', 'text-end']);
    expect(chunks.some((c) => c.type === 'finish')).toBe(false);
    expect(turn.read()).toBe(3); // routed, the delta, restarted: the new attempt's events stay unread
    await turn.whenReturned; // the turn is let go
  });

  it('with nothing open, the stream ends right after start', async () => {
    const chunks = await chunksOf(toUIMessageStream(turnOf([restarted(2), delta('a', 'x')]), { sendRouting: false }));
    expect(chunks).toEqual([{ type: 'start' }]);
  });
});

describe('resumeUIMessageStreamResponse', () => {
  it('answers 204 with no body when nothing is in flight, with the init headers', async () => {
    const runner = runnerOf([]);
    const response = await resumeUIMessageStreamResponse(runner, KEY, {
      headers: { 'cache-control': 'no-store' },
      status: 299,
    });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(runner.calls).toEqual([{ sessionKey: KEY }]);
  });

  it('streams the in-flight turn from its first event with the AI SDK headers, status and messageId of the init', async () => {
    const runner = runnerOf([routed, delta('billing', 'Refunded '), delta('billing', '$42.'), outcome('completed')]);
    const response = await resumeUIMessageStreamResponse(runner, KEY, {
      messageId: 'reply-7',
      sendRouting: false,
      headers: { 'x-chat': 'c1' },
    });
    expect(response.status).toBe(200);
    for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS))
      expect(response.headers.get(name)).toBe(value);
    expect(response.headers.get('x-chat')).toBe('c1');
    const body = await response.text();
    expect(body.startsWith('data: {"type":"start","messageId":"reply-7"}')).toBe(true);
    expect(body).toContain('"delta":"Refunded "');
    expect(body).toContain('"type":"finish"');
    expect(body).not.toContain('data-route');
  });

  it('skips restarted events before the first other event; a later one ends the stream without finish', async () => {
    const runner = runnerOf([
      restarted(2),
      delta('billing', 'Second try, '),
      restarted(3),
      delta('billing', 'third try.'),
      outcome('completed'),
    ]);
    const stream = await resumeUIMessageStream(runner, KEY, { messageId: 'm', sendRouting: false });
    const chunks = await chunksOf(stream!);
    expect(chunks.map((c) => c.type)).toEqual(['start', 'text-start', 'text-delta', 'text-end']);
    expect(chunks[2]).toMatchObject({ delta: 'Second try, ' });
  });

  it('rejects with the turn’s own error when reading it fails before its first event', async () => {
    const failure = Object.assign(new Error('The runner is closed'), { code: 'RUNNER_CLOSED' });
    const runner: TurnStreamResumer = {
      resumeStream: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(failure) }),
      }),
    };
    await expect(resumeUIMessageStreamResponse(runner, KEY)).rejects.toBe(failure);
  });

  it('cancelling the resumed stream lets the turn go (its iterator’s return), first event read or not', async () => {
    const runner = runnerOf([delta('a', 'one'), delta('a', 'two'), outcome('completed')]);
    const stream = await resumeUIMessageStream(runner, KEY);
    const reader = stream!.getReader();
    expect((await reader.read()).value).toEqual({ type: 'start' });
    await reader.cancel();
    await runner.turn!.whenReturned;
    expect(runner.turn!.read()).toBe(1); // only the peeked first event
  });

  it('refuses bad input at once with a typed error, before asking the runner', () => {
    const runner = runnerOf([delta('a', 'x')]);
    const call = (r: unknown, key: unknown, init?: unknown) => () =>
      resumeUIMessageStreamResponse(r as TurnStreamResumer, key as string, init as never);
    expectInvalid(call(undefined, KEY), 'runner', /expected a Runner .*resumeStream.*got undefined/);
    expectInvalid(call({ stream: () => undefined }, KEY), 'runner', /resumeStream/);
    expectInvalid(call(runner, ''), 'sessionKey', /non-empty string, got ""/);
    expectInvalid(call(runner, 42), 'sessionKey', /got 42/);
    expectInvalid(call(runner, KEY, 'fast'), 'init', /ResponseInit object, got "fast"/);
    expectInvalid(call(runner, KEY, { messageId: '' }), 'init.messageId', /non-empty string/);
    expectInvalid(call(runner, KEY, { sendRouting: 'no' }), 'init.sendRouting', /boolean/);
    expectInvalid(
      () => resumeUIMessageStream(runner, KEY, { messageID: 'm' } as never),
      'opts.messageID',
      /unknown option "messageID"/,
    );
    expectInvalid(() => resumeUIMessageStream(runner, null as never), 'sessionKey', /got null/);
    expect(runner.calls).toEqual([]);
  });
});

describe('the AI SDK client resuming (DefaultChatTransport, resumeStreamIsReplay)', () => {
  /** A chat whose POST streams `posted` and whose GET …/stream resumes from `runner`. */
  function chatOver(posted: readonly TurnEvent[], runner: TurnStreamResumer) {
    const requests: string[] = [];
    const transport = new DefaultChatTransport<UIMessage>({
      api: 'http://localhost/api/chat',
      fetch: async (input, init) => {
        const request = new Request(input, init);
        const url = new URL(request.url);
        requests.push(`${request.method} ${url.pathname}`);
        const match = /^\/api\/chat\/([^/]+)\/stream$/.exec(url.pathname);
        if (request.method === 'GET' && match !== null) {
          const chatId = decodeURIComponent(match[1]!);
          return resumeUIMessageStreamResponse(runner, `agent:support:web:dm:${chatId}`, {
            messageId: 'reply-1',
            sendRouting: false,
          });
        }
        return toUIMessageStreamResponse(turnOf(posted), { messageId: 'reply-1', sendRouting: false });
      },
    });
    return { chat: new TestChat({ id: 'c42', transport }), requests };
  }

  it('a stream ended by restarted, then resumed: one assistant message with the new attempt’s text only', async () => {
    const runner = runnerOf([delta('billing', 'The new '), delta('billing', 'reply.'), outcome('completed')]);
    const { chat, requests } = chatOver([delta('billing', 'The old re'), restarted(2)], runner);
    await chat.sendMessage({ text: 'charged twice' });
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(texts(chat.messages[1])).toEqual(['The old re']); // void, until the client resumes

    await chat.resumeStream();
    expect(requests).toEqual(['POST /api/chat', 'GET /api/chat/c42/stream']);
    expect(runner.calls).toEqual([{ sessionKey: 'agent:support:web:dm:c42' }]);
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(chat.messages[1]?.id).toBe('reply-1');
    expect(texts(chat.messages[1])).toEqual(['The new reply.']);
    expect(chat.status).toBe('ready');
  });

  it('a resume with nothing in flight (204) leaves the messages as they are', async () => {
    const { chat, requests } = chatOver([delta('billing', 'Done.'), outcome('completed')], runnerOf([]));
    await chat.sendMessage({ text: 'hi' });
    const before = structuredClone(chat.messages);
    await chat.resumeStream();
    expect(requests).toEqual(['POST /api/chat', 'GET /api/chat/c42/stream']);
    expect(chat.messages).toEqual(before);
    expect(chat.status).toBe('ready');
    expect(chat.error).toBeUndefined();
  });

  it('readUIMessageStream of a resumed stream is the whole reply of the latest attempt', async () => {
    const stream = await resumeUIMessageStream(
      runnerOf([routed, delta('triage', 'Passing you on.'), delta('billing', 'Refunded.'), outcome('completed')]),
      KEY,
    );
    const { message, errors } = await readMessage(stream!);
    expect(errors).toEqual([]);
    expect(texts(message)).toEqual(['Passing you on.', 'Refunded.']);
  });
});
