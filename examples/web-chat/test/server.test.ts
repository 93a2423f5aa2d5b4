// The web chat's server without a browser: its API answers, a refund approved by the reviewer
// (never by the customer), malformed requests refused with 400 and a clear message, the
// inspector's Host / Origin / JSON rules, and which model it picks.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
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
const REVIEWER = 'reviewer-secret-0123456789abcdef';

beforeAll(async () => {
  runner = deskRunner({ dbPath: join(work, 'chat.db'), model: scriptedDeskModel(), ledger });
  chat = await startWebChat({ runner, port: 0, pageDir: join(work, 'no-page'), reviewerToken: REVIEWER });
});
afterAll(async () => {
  await chat.close();
  await runner.close();
  rmSync(work, { recursive: true, force: true });
});

const JSON_TYPE = { 'content-type': 'application/json' };

const post = (body: unknown, headers: Record<string, string> = JSON_TYPE): Promise<Response> =>
  fetch(new URL('/api/chat', chat.url), {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

/** A reviewer's call, with the reviewer token (or `token`). */
const reviewer = (path: string, body?: unknown, token = REVIEWER): Promise<Response> =>
  fetch(new URL(path, chat.url), {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : JSON_TYPE) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** One raw request (any Host header); resolves with the status and the body. */
function raw(
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, chat.url), { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * Sends `messages` of chat `chatId` as the page does (the AI SDK's `DefaultChatTransport`, which
 * also parses the stream) and reads the assistant message with the AI SDK's reader.
 */
async function turn(chatId: string, messages: UIMessage[]): Promise<UIMessage> {
  const transport = new DefaultChatTransport({ api: new URL('/api/chat', chat.url).href });
  const stream = await transport.sendMessages({
    chatId,
    messages,
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream })) last = message;
  return last!;
}

const saved = async (chatId: string): Promise<UIMessage[]> =>
  (await (await fetch(new URL(`/api/chat/${chatId}/messages`, chat.url))).json()) as UIMessage[];

describe('the web chat API', () => {
  it('streams a turn, holds a $420 refund for the reviewer, who approves it; the saved conversation shows the rest', async () => {
    const first = user('u1', 'please refund $420 on my invoice');
    const asked = await turn('api-1', [first]);
    const tool = asked.parts.find((p) => p.type === 'tool-refund');
    expect(tool).toMatchObject({ state: 'approval-requested', input: { invoice: 'INV-881', amount: 420 } });
    expect(ledger.refunds).toEqual([]);
    const approvalId = (tool as { approval: { id: string } }).approval.id;

    // The reviewer sees it and approves it.
    const pending = (await (await reviewer('/api/review/pending')).json()) as { approvals: unknown[] };
    expect(pending.approvals).toContainEqual(
      expect.objectContaining({
        chatId: 'api-1',
        approvalId,
        toolName: 'refund',
        arguments: { invoice: 'INV-881', amount: 420 },
      }),
    );
    const decided = await reviewer('/api/review/decisions', {
      chatId: 'api-1',
      decisions: [{ id: approvalId, approved: true }],
    });
    expect(decided.status).toBe(200);
    expect(await decided.json()).toMatchObject({ status: 'completed' });
    expect(ledger.refunds).toHaveLength(1);

    const reload = await saved('api-1');
    expect(reload.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(JSON.stringify(reload)).not.toContain('[ROUTE_');
    expect(JSON.stringify(reload)).toContain('$420 is on its way back');
    expect(await runner.transcript(sessionKeyOf('api-1'))).toContainEqual(
      expect.objectContaining({ type: 'tool', status: 'done' }),
    );
    const history = runner.history(sessionKeyOf('api-1'), { limit: 1 });
    for await (const v of history) expect(v.cause?.approvals).toEqual([expect.objectContaining({ by: 'reviewer' })]);
    expect(((await (await reviewer('/api/review/pending')).json()) as { approvals: unknown[] }).approvals).toEqual([]);
  });

  it('streams no routing marker to the browser at all: not in text, not in data parts', async () => {
    const res = await post({ id: 'api-raw', messages: [user('u', 'my invoice charged me twice')] });
    expect(res.status).toBe(200);
    const body = await res.text(); // the UI message stream as it goes over the wire
    expect(body).toContain('"type":"data-handoff","data":{"from":"triage","to":"billing"}');
    expect(body).not.toMatch(/ROUTE_BILLING|RESOLVED|ANSWERED/);
    // The handoff was a transfer tool call (handoff_mode: tool): no tool part for it either.
    expect(body).not.toContain('transfer_to');
    expect(body).not.toContain('"toolName":"finish"');
  });

  it('refuses answers to approval requests from the chat (403): the customer cannot approve their own refund', async () => {
    const first = user('u1', 'please refund $500 on my invoice');
    const asked = await turn('api-self', [first]);
    const tool = asked.parts.find((p) => p.type === 'tool-refund') as { approval: { id: string } };
    const answered = {
      ...asked,
      parts: asked.parts.map((p) =>
        p === (tool as unknown)
          ? { ...p, state: 'approval-responded', approval: { id: tool.approval.id, approved: true } }
          : p,
      ),
    };
    const res = await post({ id: 'api-self', messages: [first, answered] });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toContain('reviewer');
    expect(ledger.refunds.filter((r) => r.amount === 500)).toEqual([]);
    expect((await runner.session(sessionKeyOf('api-self')))?.pendingApprovals).toHaveLength(1);
  });

  it('the reviewer API needs the reviewer token (401 without it or with another) and checks decisions (400)', async () => {
    for (const res of [
      await fetch(new URL('/api/review/pending', chat.url)),
      await reviewer('/api/review/pending', undefined, 'not-the-token'),
      await reviewer('/api/review/decisions', { chatId: 'api-self', decisions: [{ id: 'ap-1', approved: true }] }, ''),
    ]) {
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toContain('reviewer token');
    }
    for (const [body, problem] of [
      [{ chatId: 'api-self', decisions: [] }, 'decisions: expected at least one decision'],
      [{ chatId: 'api-self', decisions: [{ id: 'ap-1', approved: 'yes' }] }, 'decisions[0].approved'],
      [{ chatId: 'no spaces', decisions: [{ id: 'ap-1', approved: true }] }, 'chatId: expected a chat id'],
      [
        { chatId: 'api-self', decisions: [{ id: 'ap-1', approved: false, reason: 'x'.repeat(1001) }] },
        'decisions[0].reason',
      ],
      [{ chatId: 'api-self', decisions: [{ id: 'ap-1', approved: true }], extra: 1 }, 'the body'],
    ] as const) {
      const res = await reviewer('/api/review/decisions', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain(problem);
    }
    expect(ledger.refunds.filter((r) => r.amount === 500)).toEqual([]);
  });

  it.each([
    [
      'parts that are a string',
      { id: 'bad-1', messages: [{ id: 'u', role: 'user', parts: 'hello' }] },
      'messages[0].parts',
    ],
    ['a null part', { id: 'bad-2', messages: [{ id: 'u', role: 'user', parts: [null] }] }, 'messages[0].parts[0]'],
    ['a null message', { id: 'bad-3', messages: [null] }, 'messages[0]'],
    ['a message without parts', { id: 'bad-4', messages: [{ id: 'u', role: 'user' }] }, 'messages[0].parts'],
    [
      'a text that is an object',
      { id: 'bad-5', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: { a: 1 } }] }] },
      'messages[0].parts[0].text',
    ],
    [
      'a message of an unknown role',
      { id: 'bad-6', messages: [{ id: 'u', role: 'boss', parts: [] }] },
      'messages[0].role',
    ],
    ['no messages', { id: 'bad-7', messages: [] }, 'messages: expected at least one message'],
    ['a bad chat id', { id: 'no spaces', messages: [user('u', 'hi')] }, 'id: expected a chat id'],
    ['a body that is a list', [1, 2], 'the body'],
    ['an empty user message', { id: 'bad-8', messages: [user('u', '  ')] }, 'has no text'],
    ['a message too long', { id: 'bad-9', messages: [user('u', 'x'.repeat(8001))] }, 'longer than 8000'],
  ])('answers %s with 400 naming the field, and stores nothing', async (_name, body, problem) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toContain(problem);
    expect(error).not.toMatch(/TypeError|Cannot read|undefined|\[object Object\]/);
    const id = (body as { id?: unknown }).id;
    if (typeof id === 'string' && !id.includes(' ')) expect(await runner.session(sessionKeyOf(id))).toBeUndefined();
  });

  it('answers a bad %-escape in the chat id or a file path with 400, a bad chat id with 400, and 503 without a built page', async () => {
    for (const path of [
      '/api/chat/%E0%A4%A/messages',
      '/api/chat/%/messages',
      '/api/chat/no%20spaces/messages',
      '/api/chat/%E0%A4%A/stream',
      '/api/chat/no%20spaces/stream',
      '/%E0%A4%A',
    ]) {
      const res = await fetch(new URL(path, chat.url));
      expect(res.status, path).toBe(path === '/%E0%A4%A' ? 503 : 400);
    }
    const bad = await fetch(new URL('/api/chat/%E0%A4%A/messages', chat.url));
    expect(((await bad.json()) as { error: string }).error).toContain('bad %-escape');
    const page = await fetch(chat.url);
    expect(page.status).toBe(503);
    expect(await page.text()).toContain('pnpm --filter @signalyard-examples/web-chat build');
  });

  it('answers the resume route with 204 when the runner applies turns itself (no durable inbox: nothing to resume)', async () => {
    await turn('resume-1', [user('u1', 'my invoice charged me twice')]);
    const res = await fetch(new URL('/api/chat/resume-1/stream', chat.url));
    expect(res.status).toBe(204);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toBe('');
    // What the page's AI SDK transport makes of it: no stream to resume.
    const transport = new DefaultChatTransport({ api: new URL('/api/chat', chat.url).href });
    expect(await transport.reconnectToStream({ chatId: 'resume-1' })).toBeNull();
  });

  it('refuses a Host header it does not know (DNS rebinding) with 403, on the API and the pages', async () => {
    const port = new URL(chat.url).port;
    for (const path of ['/api/chat/api-1/messages', '/', '/review']) {
      const res = await raw(path, { headers: { host: `evil.example:${port}` } });
      expect(res.status, path).toBe(403);
      expect(res.body).toContain('is not allowed');
    }
    const posted = await raw('/api/chat', {
      method: 'POST',
      headers: { host: `evil.example:${port}`, ...JSON_TYPE },
      body: JSON.stringify({ id: 'rebound', messages: [user('u', 'hi')] }),
    });
    expect(posted.status).toBe(403);
    expect((await raw('/api/chat/api-1/messages', { headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect(await runner.session(sessionKeyOf('rebound'))).toBeUndefined();
  });

  it("refuses a POST from another site's page (Origin) with 403, and a body not declared JSON with 415", async () => {
    const body = { id: 'cross-site', messages: [user('u', 'please refund $420')] };
    for (const origin of ['http://evil.example', 'null', 'http://127.0.0.1:1']) {
      const res = await post(body, { ...JSON_TYPE, origin });
      expect(res.status, origin).toBe(403);
    }
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await post(body, { 'content-type': type });
      expect(res.status, type).toBe(415);
      expect(((await res.json()) as { error: string }).error).toContain('application/json');
    }
    expect(await runner.session(sessionKeyOf('cross-site'))).toBeUndefined();
    // The page's own origin may.
    const own = await post(
      { id: 'same-site', messages: [user('u', 'hello')] },
      { ...JSON_TYPE, origin: new URL(chat.url).origin },
    );
    expect(own.status).toBe(200);
    await own.text();
  });

  it('runs on the scripted desk without a key, and on OpenAI through the AI SDK with OPENAI_API_KEY', () => {
    expect(defaultModel({}).name).toMatch(/^scripted/);
    expect(defaultModel({ OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'gpt-4.1-mini' }).name).toBe('openai:gpt-4.1-mini');
  });
});
