// The web chat's server without a browser: its API answers, the approval round trip read back
// with the AI SDK's own reader, and which model it picks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runner } from 'signalyard';
import { defaultModel, deskRunner, scriptedDeskModel, sessionKeyOf, type RefundLedger } from '../src/desk.js';
import { startWebChat, type WebChat } from '../src/server.js';

const work = mkdtempSync(join(tmpdir(), 'signalyard-web-chat-api-'));
let runner: Runner;
let chat: WebChat;
const ledger: RefundLedger = { refunds: [] };

beforeAll(async () => {
  runner = deskRunner({ dbPath: join(work, 'chat.db'), model: scriptedDeskModel(), ledger });
  chat = await startWebChat({ runner, port: 0, pageDir: join(work, 'no-page') });
});
afterAll(async () => {
  await chat.close();
  await runner.close();
  rmSync(work, { recursive: true, force: true });
});

const post = (body: unknown): Promise<Response> =>
  fetch(new URL('/api/chat', chat.url), { method: 'POST', body: JSON.stringify(body) });

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

/**
 * Sends `messages` of chat `chatId` as the page does (the AI SDK's `DefaultChatTransport`, which
 * also parses the stream) and reads the assistant message with the AI SDK's reader, continuing
 * `previous` when given.
 */
async function turn(chatId: string, messages: UIMessage[], previous?: UIMessage): Promise<UIMessage> {
  const transport = new DefaultChatTransport({ api: new URL('/api/chat', chat.url).href });
  const stream = await transport.sendMessages({
    chatId,
    messages,
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, ...(previous && { message: previous }) })) last = message;
  return last!;
}

describe('the web chat API', () => {
  it('streams a turn, pauses a $420 refund for approval, and resumes it into the same assistant message', async () => {
    const first = user('u1', 'please refund $420 on my invoice');
    const asked = await turn('api-1', [first]);
    const tool = asked.parts.find((p) => p.type === 'tool-refund');
    expect(tool).toMatchObject({ state: 'approval-requested', input: { invoice: 'INV-881', amount: 420 } });
    expect(ledger.refunds).toEqual([]);

    const approvalId = (tool as { approval: { id: string } }).approval.id;
    const answered: UIMessage = {
      ...asked,
      id: 'a1',
      parts: asked.parts.map((p) =>
        p === tool ? { ...tool, state: 'approval-responded', approval: { id: approvalId, approved: true } } : p,
      ) as UIMessage['parts'],
    };
    const done = await turn('api-1', [first, answered], answered);
    expect(done.id).toBe('a1');
    expect(done.parts.find((p) => p.type === 'tool-refund')).toMatchObject({
      state: 'output-available',
      output: { refunded: 420, reference: 'RF-1017' },
    });
    expect(done.parts.at(-1)).toMatchObject({ type: 'text', text: expect.stringContaining('$420 is on its way back') });
    expect(ledger.refunds).toHaveLength(1);

    const reload = (await (await fetch(new URL('/api/chat/api-1/messages', chat.url))).json()) as UIMessage[];
    expect(reload.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(JSON.stringify(reload)).not.toContain('[ROUTE_');
    expect(await runner.transcript(sessionKeyOf('api-1'))).toContainEqual(
      expect.objectContaining({ type: 'tool', status: 'done' }),
    );
  });

  it('answers 400 for a bad chat id, an empty conversation or an assistant message without answers; 503 without a built page', async () => {
    expect((await post({ id: 'no spaces', messages: [user('u', 'hi')] })).status).toBe(400);
    expect((await post({ id: 'api-2', messages: [] })).status).toBe(400);
    expect((await post({ id: 'api-2', messages: [{ id: 'a', role: 'assistant', parts: [] }] })).status).toBe(400);
    expect((await fetch(new URL('/api/chat/no%20spaces/messages', chat.url))).status).toBe(400);
    const page = await fetch(chat.url);
    expect(page.status).toBe(503);
    expect(await page.text()).toContain('pnpm --filter @signalyard-examples/web-chat build');
  });

  it('runs on the scripted desk without a key, and on OpenAI through the AI SDK with OPENAI_API_KEY', () => {
    expect(defaultModel({}).name).toMatch(/^scripted/);
    expect(defaultModel({ OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'gpt-4.1-mini' }).name).toBe('openai:gpt-4.1-mini');
  });
});
