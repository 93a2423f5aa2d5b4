// The support desk's chat page: the AI SDK's chat client (see chat.ts) renders the UI message
// stream of the server's turns — text parts as they grow, handoffs as badges, tool calls with
// their results, and Approve / Deny buttons for a tool call waiting for a person.
import {
  DefaultChatTransport,
  getToolName,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';
import { Chat } from './chat.js';

type Part = UIMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

function $<T extends HTMLElement>(selector: string, type: new () => T): T {
  const node = document.querySelector(selector);
  if (!(node instanceof type)) throw new Error(`The page has no ${selector}`);
  return node;
}
const list = $('#messages', HTMLElement);
const form = $('#composer', HTMLFormElement);
const prompt = $('#prompt', HTMLInputElement);
const send = $('#send', HTMLButtonElement);
const errorLine = $('#error', HTMLParagraphElement);

function el(tag: string, attrs: Record<string, string> = {}, text?: string): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A tool's input or output, pretty-printed (a string result as it is). */
function json(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** The chat id: `?chat=…` in the address, or a new one put there (so a reload keeps the conversation). */
function chatId(): string {
  const url = new URL(location.href);
  const given = url.searchParams.get('chat');
  if (given !== null && /^[A-Za-z0-9_-]{1,64}$/.test(given)) return given;
  const id = crypto.randomUUID();
  url.searchParams.set('chat', id);
  history.replaceState(null, '', url);
  return id;
}

function renderTool(chat: Chat, part: ToolPart): HTMLElement {
  const box = el('div', { class: 'tool', 'data-state': part.state, 'data-tool-call-id': part.toolCallId });
  box.append(el('div', { class: 'tool-name' }, `tool · ${getToolName(part)}`));
  if (part.input !== undefined) box.append(el('pre', { class: 'tool-input' }, json(part.input)));
  if (part.state === 'approval-requested') {
    const id = part.approval.id;
    const buttons = el('div', { class: 'approval', 'data-approval-id': id });
    const approve = el('button', { class: 'approve', type: 'button' }, 'Approve');
    const deny = el('button', { class: 'deny', type: 'button' }, 'Deny');
    approve.addEventListener('click', () => void chat.addToolApprovalResponse({ id, approved: true }));
    deny.addEventListener('click', () => void chat.addToolApprovalResponse({ id, approved: false }));
    buttons.append(el('span', {}, 'Needs your approval'), approve, deny);
    box.append(buttons);
  } else if (part.state === 'approval-responded') {
    box.append(el('div', { class: 'tool-status' }, part.approval.approved ? 'approved, running…' : 'denied'));
  } else if (part.state === 'output-available') {
    box.append(el('pre', { class: 'tool-result' }, json(part.output)));
  } else if (part.state === 'output-error') {
    box.append(el('div', { class: 'tool-status error' }, part.errorText));
  } else if (part.state === 'output-denied') {
    box.append(el('div', { class: 'tool-status denied' }, 'denied: it did not run'));
  }
  return box;
}

function renderPart(chat: Chat, part: Part): HTMLElement | undefined {
  if (part.type === 'text') return el('p', { class: 'text' }, part.text);
  if (isToolUIPart(part)) return renderTool(chat, part);
  if (part.type === 'data-handoff') {
    const { from, to } = part.data as { from: string; to: string };
    return el('span', { class: 'badge handoff', 'data-from': from, 'data-to': to }, `${from} → ${to}`);
  }
  if (part.type === 'data-rejected') {
    return el('div', { class: 'notice' }, `Not sent: ${(part.data as { reason: string }).reason}`);
  }
  return undefined; // data-route, step-start, …: not shown
}

function render(chat: Chat): void {
  const nodes = chat.messages.map((message) => {
    const node = el('article', { class: `msg ${message.role}`, 'data-role': message.role, 'data-id': message.id });
    for (const part of message.parts) {
      const child = renderPart(chat, part);
      if (child !== undefined) node.append(child);
    }
    return node;
  });
  list.replaceChildren(...nodes);
  const busy = chat.status === 'submitted' || chat.status === 'streaming';
  document.body.dataset.status = chat.status;
  send.disabled = busy;
  errorLine.hidden = chat.error === undefined;
  errorLine.textContent = chat.error?.message ?? '';
  list.scrollTop = list.scrollHeight;
}

async function main(): Promise<void> {
  const id = chatId();
  const res = await fetch(`/api/chat/${encodeURIComponent(id)}/messages`);
  if (!res.ok) throw new Error(`Could not load the conversation: ${res.status}`);
  const messages = (await res.json()) as UIMessage[];
  const chat: Chat = new Chat({
    id,
    messages,
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    // After the person answered every approval request, send the answers (the server resumes the turn).
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    // Render after the change (not inside the chat's constructor or its state update).
    onChange: () => {
      queueMicrotask(() => {
        render(chat);
      });
    },
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = prompt.value.trim();
    if (text === '' || send.disabled) return;
    prompt.value = '';
    void chat.sendMessage({ text });
  });
  render(chat);
  document.body.dataset.ready = 'true';
}

main().catch((error: unknown) => {
  errorLine.hidden = false;
  errorLine.textContent = error instanceof Error ? error.message : String(error);
});
