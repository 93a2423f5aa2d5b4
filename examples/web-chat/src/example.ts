// `pnpm --filter @signalyard-examples/web-chat example` (and `pnpm examples:all`): the web chat's
// story without a browser. The server runs as with `start`; the customer's client is the AI SDK's
// own chat client (the page's `Chat`, over `DefaultChatTransport`), driven from Node; the
// reviewer's decisions go through the reviewer API with its token, as the reviewer page sends
// them. It prints each message's parts as the pages would show them, and fails when the story
// does not hold.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultChatTransport, isToolUIPart, type UIMessage } from 'ai';
import { Chat } from '../page/chat.js';
import { deskRunner, scriptedDeskModel, type RefundLedger } from './desk.js';
import { startWebChat } from './server.js';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-web-chat-'));
const ledger: RefundLedger = { refunds: [] };
const runner = deskRunner({ dbPath: join(dir, 'chat.db'), model: scriptedDeskModel(), ledger });
const server = await startWebChat({ runner, port: 0 });

function show(message: UIMessage | undefined): void {
  for (const part of message?.parts ?? []) {
    if (part.type === 'text') console.log(`   text     ${part.text}`);
    else if (part.type === 'data-handoff') console.log(`   badge    ${JSON.stringify(part.data)}`);
    else if ('toolCallId' in part) {
      const output = part.state === 'output-available' ? ` → ${JSON.stringify(part.output)}` : '';
      console.log(`   tool     ${part.type} ${JSON.stringify(part.input)} [${part.state}]${output}`);
    }
  }
}

const reviewerToken = new URL(server.reviewUrl).hash.slice('#token='.length);

/** The reviewer clicks Approve or Deny on the reviewer page. */
async function review(chatId: string, approvalId: string, approved: boolean): Promise<void> {
  const res = await fetch(new URL('/api/review/decisions', server.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${reviewerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ chatId, decisions: [{ id: approvalId, approved }] }),
  });
  assert.equal(res.status, 200, await res.clone().text());
}

/** The conversation as a (re)loaded page shows it. */
async function saved(chatId: string): Promise<UIMessage[]> {
  return (await (await fetch(new URL(`/api/chat/${chatId}/messages`, server.url))).json()) as UIMessage[];
}

/** One conversation: a billing question, a $420 refund, and the reviewer's decision. */
async function story(id: string, approved: boolean): Promise<UIMessage[]> {
  const chat = new Chat({
    id,
    transport: new DefaultChatTransport({ api: new URL('/api/chat', server.url).href }),
    onChange: () => undefined,
  });
  for (const text of ['my invoice charged me twice', 'please refund $420']) {
    console.log(`── ${id} · user: "${text}"`);
    await chat.sendMessage({ text });
    show(chat.lastMessage);
  }
  const waiting = chat.lastMessage?.parts.find(isToolUIPart);
  assert.ok(waiting?.state === 'approval-requested', 'an approval request');
  console.log(`── ${id} · waiting for a reviewer; the reviewer clicks ${approved ? 'Approve' : 'Deny'}`);
  await review(id, waiting.approval.id, approved);
  // The customer's page reloads the conversation once the reviewer decided.
  const messages = await saved(id);
  show(messages.at(-1));
  assert.equal(chat.error, undefined);
  return messages;
}

try {
  console.log(`web chat at ${server.url} (scripted model, sessions in ${join(dir, 'chat.db')})\n`);
  const approved = await story('approve-example', true);
  const textOf = (ms: UIMessage[]): string[] =>
    ms.flatMap((m) => m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])));
  assert.ok(!textOf(approved).some((t) => /\[(ROUTE_BILLING|RESOLVED|ANSWERED)\]/.test(t)), 'no marker in any text');
  // Handoffs are transfer tool calls, shown as badges, never as tools; the refund question went
  // straight to billing (resume_at: last_agent), so there is one handoff in the conversation.
  const parts = approved.flatMap((m) => m.parts);
  assert.equal(parts.filter((p) => p.type === 'data-handoff').length, 1, 'one handoff badge');
  assert.ok(!JSON.stringify(approved).includes('transfer_to'), 'no transfer call shown as a tool');
  assert.deepEqual(
    ledger.refunds.map((r) => r.amount),
    [420],
  );
  assert.ok(
    textOf(approved).some((t) => t.includes('$420 is on its way back')),
    'the reply after the approval',
  );
  console.log(`── the page shows ${approved.length} messages, rebuilt from runner.transcript\n`);
  await story('deny-example', false);
  assert.equal(ledger.refunds.length, 1, 'a denied refund never runs');
  console.log('\nweb chat example: ok');
} finally {
  await server.close();
  await runner.close();
  rmSync(dir, { recursive: true, force: true });
}
