// The sections of one session's view besides its timeline and diagrams: the header, the pending
// approvals with Approve / Deny, the chat, and the versions with View and Fork from here. Each
// takes what it shows and the actions it may call; none fetches anything itself.
import { el, json, lines, time } from './dom.js';
import { causeText, decisionText, withoutMarkers } from './engine-text.js';

/** The session's key, agent, version and state; when viewing a past version, a way back. */
export function header(s, { viewing, onSelect }) {
  return el(
    'section',
    { id: 'session-header' },
    el('h2', {}, el('span', { className: 'mono' }, s.sessionKey)),
    el(
      'div',
      { className: 'muted' },
      `agent ${s.agentId} · version ${s.version}`,
      s.strategy.type === 'fsm' ? ` · state ${String(s.strategy.current_state)}` : ` · strategy ${s.strategy.type}`,
      s.busy ? ' · busy' : '',
      s.queued > 0 ? ` · ${s.queued} queued` : '',
    ),
    viewing
      ? el(
          'p',
          { className: 'note', id: 'viewing-version' },
          `Viewing version ${s.version} (read-only). `,
          el('button', { onclick: () => onSelect(s.sessionKey, undefined) }, 'Back to the current version'),
        )
      : undefined,
  );
}

/** The header of a session with nothing saved yet (its first entries wait in the inbox). */
export function unsavedHeader(key) {
  return el(
    'section',
    { id: 'session-header' },
    el('h2', {}, el('span', { className: 'mono' }, key)),
    el('div', { className: 'muted' }, 'nothing saved yet: its first entries wait in the inbox'),
  );
}

/** The pending approvals with their arguments; Approve / Deny (with a reason) call `onDecide(decision)` when allowed. */
export function approvalsSection(s, { viewing, canApprove, onDecide }) {
  const pending = s.pendingApprovals ?? [];
  if (pending.length === 0 || viewing) return el('section', { id: 'approvals', hidden: true });
  return el(
    'section',
    { id: 'approvals' },
    el('h2', {}, `Pending approvals (${pending.length})`),
    canApprove ? undefined : el('p', { className: 'muted' }, 'Approving needs a live runner with approve().'),
    ...pending.map((p) => {
      const reason = el('input', { type: 'text', placeholder: 'reason (optional)', 'aria-label': 'reason' });
      const decide = (approved) => () =>
        onDecide({ id: p.id, approved, ...(reason.value !== '' && { reason: reason.value }) });
      return el(
        'div',
        { className: 'approval', 'data-approval': p.id },
        el('div', {}, el('strong', {}, p.toolName), ` by ${p.agentId} · requested ${time(p.requestedAt)}`),
        p.reason ? el('div', { className: 'muted' }, `why: ${p.reason}`) : undefined,
        el('pre', {}, lines(json(p.arguments))),
        canApprove
          ? el(
              'div',
              {},
              reason,
              ' ',
              el('button', { className: 'approve', onclick: decide(true) }, 'Approve'),
              ' ',
              el('button', { className: 'deny', onclick: decide(false) }, 'Deny'),
            )
          : undefined,
      );
    }),
  );
}

function transcriptItem(t) {
  if (t.type === 'user')
    return el('li', { className: 'user' }, el('span', { className: 'who' }, 'user'), lines(t.text));
  if (t.type === 'assistant') {
    const who = typeof t.group === 'string' ? `${t.agentId} (group ${t.group})` : t.agentId;
    return el('li', {}, el('span', { className: 'who' }, who), lines(t.text));
  }
  if (t.type === 'handoff') {
    const group = typeof t.group === 'string' ? `, group ${t.group}` : '';
    return el('li', { className: 'muted' }, `handoff ${t.from} → ${t.to} (${t.via}${group})`);
  }
  const result = t.result === undefined ? '' : ` → ${typeof t.result === 'string' ? t.result : json(t.result)}`;
  return el(
    'li',
    { className: 'muted tool' },
    lines(`tool ${t.call?.name ?? '?'}: ${t.status}${result}`),
    // Why it ran (or waited, or was refused): what the approvals policy decided.
    t.approval ? el('span', { className: 'why' }, ` (${decisionText(t.approval)})`) : undefined,
  );
}

/** A stored message for the offline chat: markers hidden; tool results and empty replies not shown. */
function historyItem(m) {
  if (m.role === 'tool' || m.role === 'system') return undefined;
  const text = m.role === 'assistant' ? withoutMarkers(m.content) : m.content;
  if (text === '') return undefined;
  return el('li', { className: m.role }, el('span', { className: 'who' }, m.name ?? m.role), lines(text));
}

/**
 * The chat: the engine's transcript when there is one; else (offline) the stored history as a
 * chat shows it — routing markers hidden, tool results left out.
 */
export function chatSection(s) {
  const items =
    s.transcript !== null
      ? s.transcript.map(transcriptItem)
      : s.history.map(historyItem).filter((item) => item !== undefined);
  return el(
    'section',
    {},
    el('h2', {}, 'Chat'),
    items.length === 0
      ? el('p', { className: 'muted' }, 'No messages.')
      : el('ul', { className: 'chat', id: 'chat' }, items),
  );
}

/**
 * The kept versions with their cause: View, and (when allowed) Fork from here into a new key and
 * Rewind to here (saves that version's data as the newest; the versions between stay).
 */
export function versionsSection(s, versions, { canFork, canRewind, onSelect, onFork, onRewind }) {
  const rows = versions.map((v) => {
    const target = el('input', { type: 'text', placeholder: 'new session key', 'aria-label': 'new session key' });
    return el(
      'tr',
      { 'data-version': v.version },
      el('td', {}, String(v.version)),
      el('td', {}, time(v.updatedAt)),
      el('td', {}, causeText(v.cause)),
      el(
        'td',
        {},
        el('button', { className: 'view', onclick: () => onSelect(s.sessionKey, v.version) }, 'View'),
        canFork
          ? [
              ' ',
              target,
              ' ',
              el('button', { className: 'fork', onclick: () => onFork(v.version, target.value) }, 'Fork from here'),
            ]
          : undefined,
        canRewind && v.version !== s.version
          ? [' ', el('button', { className: 'rewind', onclick: () => onRewind(v.version) }, 'Rewind to here')]
          : undefined,
      ),
    );
  });
  return el(
    'section',
    {},
    el('h2', {}, 'Versions'),
    el(
      'table',
      { id: 'versions' },
      el(
        'thead',
        {},
        el('tr', {}, el('th', {}, 'version'), el('th', {}, 'saved'), el('th', {}, 'cause'), el('th', {}, '')),
      ),
      el('tbody', {}, rows),
    ),
  );
}
