// The reviewer's page: every web chat's pending approvals (refunds over the policy's limit), each
// with Approve / Deny and a reason. Its address carries the reviewer token once
// (`/review#token=…`, printed by the server); the page keeps it for this tab and sends it as a
// bearer token. The customer's page shows the decision and what followed it.
import type { PendingReview } from '../src/review-desk.js';
import { $, el } from './dom.js';

/** How often the list is reloaded, so new requests show up. */
const POLL_MS = 1000;

const list = $('#reviews', HTMLElement);
const empty = $('#empty', HTMLParagraphElement);
const errorLine = $('#error', HTMLParagraphElement);

/** The token from the address (then taken out of it, kept for this tab), or the one kept. */
function reviewerToken(): string {
  const given = new URLSearchParams(location.hash.slice(1)).get('token');
  if (given !== null) {
    sessionStorage.setItem('reviewer-token', given);
    history.replaceState(null, '', location.pathname);
    return given;
  }
  const kept = sessionStorage.getItem('reviewer-token');
  if (kept === null)
    throw new Error('This page needs the reviewer token: open the reviewer address the server printed');
  return kept;
}

async function call<T>(token: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const data = (await res.json().catch(() => ({}))) as { error?: string };
  if (!res.ok) throw new Error(data.error ?? `HTTP ${res.status}`);
  return data as T;
}

function showError(error: unknown): void {
  errorLine.hidden = error === undefined;
  errorLine.textContent =
    error === undefined ? '' : error instanceof Error ? error.message : 'The request failed: see the browser console';
  if (error !== undefined && !(error instanceof Error)) console.error(error);
}

function renderReview(token: string, p: PendingReview, reload: () => void): HTMLElement {
  const box = el('article', { class: 'review-item', 'data-chat-id': p.chatId, 'data-approval-id': p.approvalId });
  box.append(
    el('div', { class: 'tool-name' }, `${p.toolName} · chat ${p.chatId}`),
    el('pre', { class: 'tool-input' }, JSON.stringify(p.arguments, null, 2)),
  );
  if (p.reason !== undefined) box.append(el('div', { class: 'why' }, `why: ${p.reason}`));
  const reason = el('input', { class: 'reason', placeholder: 'reason (optional)', 'aria-label': 'reason' });
  const approve = el('button', { class: 'approve', type: 'button' }, 'Approve');
  const deny = el('button', { class: 'deny', type: 'button' }, 'Deny');
  const decide = (approved: boolean) => (): void => {
    approve.setAttribute('disabled', '');
    deny.setAttribute('disabled', '');
    const text = (reason as HTMLInputElement).value.trim();
    const decision = { id: p.approvalId, approved, ...(text === '' ? {} : { reason: text }) };
    call(token, '/api/review/decisions', { chatId: p.chatId, decisions: [decision] })
      .then(() => {
        showError(undefined);
        reload();
      })
      .catch(showError);
  };
  approve.addEventListener('click', decide(true));
  deny.addEventListener('click', decide(false));
  const row = el('div', { class: 'approval' });
  row.append(reason, approve, deny);
  box.append(row);
  return box;
}

async function main(): Promise<void> {
  const token = reviewerToken();
  /** The items shown, by chat and approval id: kept across reloads, so a reason being typed stays. */
  const items = new Map<string, HTMLElement>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const load = async (): Promise<void> => {
    const { approvals } = await call<{ approvals: PendingReview[] }>(token, '/api/review/pending');
    const now = new Map(approvals.map((p) => [`${p.chatId}/${p.approvalId}`, p]));
    for (const [key, node] of items) {
      if (now.has(key)) continue;
      node.remove(); // decided
      items.delete(key);
    }
    for (const [key, p] of now) {
      if (items.has(key)) continue;
      const node = renderReview(token, p, reload);
      items.set(key, node);
      list.append(node);
    }
    empty.hidden = approvals.length > 0;
  };
  const reload = (): void => {
    clearTimeout(timer);
    load()
      .catch(showError)
      .finally(() => {
        timer = setTimeout(reload, POLL_MS);
      });
  };
  await load();
  timer = setTimeout(reload, POLL_MS);
  document.body.dataset.ready = 'true';
}

main().catch(showError);
