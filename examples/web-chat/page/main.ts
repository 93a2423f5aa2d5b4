// The support desk's chat page: the AI SDK's chat client (see chat.ts) renders the UI message
// stream of the server's turns — text parts as they grow, handoffs as badges, tool calls with
// their results. A tool call waiting for approval shows as waiting: a reviewer decides it on the
// reviewer page (review.ts), not the customer; meanwhile this page reloads the conversation
// until the decision and what followed it are there. A reply in flight is resumed on load and
// after an interruption (resume.ts).
import { getToolName, isToolUIPart, type UIMessage } from 'ai';
import { Chat } from './chat.js';
import { $, el } from './dom.js';
import { ResumingTransport, resumer } from './resume.js';

type Part = UIMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

const list = $('#messages', HTMLElement);
const form = $('#composer', HTMLFormElement);
const prompt = $('#prompt', HTMLInputElement);
const send = $('#send', HTMLButtonElement);
const errorLine = $('#error', HTMLParagraphElement);

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

/** How often the page looks whether the reviewer decided, while an approval is pending. */
const REVIEW_POLL_MS = 1000;

function renderTool(part: ToolPart): HTMLElement {
  const box = el('div', { class: 'tool', 'data-state': part.state, 'data-tool-call-id': part.toolCallId });
  box.append(el('div', { class: 'tool-name' }, `tool · ${getToolName(part)}`));
  if (part.input !== undefined) box.append(el('pre', { class: 'tool-input' }, json(part.input)));
  if (part.state === 'approval-requested') {
    box.append(
      el(
        'div',
        { class: 'approval-waiting', 'data-approval-id': part.approval.id },
        'Waiting for a reviewer to approve or deny this…',
      ),
    );
  } else if (part.state === 'output-available') {
    box.append(el('pre', { class: 'tool-result' }, json(part.output)));
  } else if (part.state === 'output-error') {
    box.append(el('div', { class: 'tool-status error' }, part.errorText));
  } else if (part.state === 'output-denied') {
    box.append(el('div', { class: 'tool-status denied' }, 'denied: it did not run'));
  }
  return box;
}

function renderPart(part: Part): HTMLElement | undefined {
  if (part.type === 'text') return el('p', { class: 'text' }, part.text);
  if (isToolUIPart(part)) return renderTool(part);
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
      const child = renderPart(part);
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

async function loadMessages(id: string): Promise<UIMessage[]> {
  const res = await fetch(`/api/chat/${encodeURIComponent(id)}/messages`);
  if (!res.ok) throw new Error(`Could not load the conversation: ${res.status}`);
  return (await res.json()) as UIMessage[];
}

/** True while a tool call of the conversation waits for the reviewer. */
function awaitingReview(messages: readonly UIMessage[]): boolean {
  return messages.some((m) => m.parts.some((p) => isToolUIPart(p) && p.state === 'approval-requested'));
}

/**
 * While an approval is pending (and no turn is running), reloads the conversation every
 * second; once the reviewer decided, shows what the runner saved since: the tool's result or
 * its denial, and the reply that followed.
 */
function watchReview(chat: Chat, id: string): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A call, not a property read: a turn may start while the conversation loads.
  const idle = (): boolean => chat.status === 'ready';
  const check = async (): Promise<void> => {
    timer = undefined;
    if (!idle() || !awaitingReview(chat.messages)) return;
    const saved = await loadMessages(id);
    if (!idle()) return; // the customer sent a message meanwhile: its turn shows what is new
    if (!awaitingReview(saved)) chat.messages = saved;
    else schedule();
  };
  const schedule = (): void => {
    timer ??= setTimeout(() => {
      check().catch((error: unknown) => {
        showError(error);
        schedule();
      });
    }, REVIEW_POLL_MS);
  };
  return () => {
    if (idle() && awaitingReview(chat.messages)) schedule();
  };
}

function showError(error: unknown): void {
  errorLine.hidden = false;
  errorLine.textContent = error instanceof Error ? error.message : String(error);
}

async function main(): Promise<void> {
  const id = chatId();
  const messages = await loadMessages(id);
  let afterRender = (): void => undefined;
  const transport = new ResumingTransport({ api: '/api/chat' });
  const resuming = resumer(
    () => chat,
    transport,
    () => loadMessages(id),
  );
  const chat: Chat = new Chat({
    id,
    messages,
    transport,
    onFinish: resuming.onFinish,
    // Render after the change (not inside the chat's constructor or its state update).
    onChange: () => {
      queueMicrotask(() => {
        render(chat);
        afterRender();
      });
    },
  });
  afterRender = watchReview(chat, id);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = prompt.value.trim();
    if (text === '' || send.disabled) return;
    prompt.value = '';
    void chat.sendMessage({ text });
  });
  render(chat);
  afterRender();
  // A reply in flight (a reload mid-reply, with --workers): shown again from its start, then live.
  await resuming.onLoad();
  document.body.dataset.ready = 'true';
}

main().catch(showError);
