// The sessions list: key, agent, status, version, last activity, pending approvals; filtered by text.
import { el, time } from './dom.js';

/** Renders `sessions` (those matching `filter`) into the list, marking `selected`; a click calls `onSelect(key)`. */
export function renderSessions({ sessions, filter, selected, onSelect }) {
  const list = document.getElementById('session-list');
  const needle = filter.toLowerCase();
  const shown = sessions.filter(
    (s) => needle === '' || `${s.sessionKey} ${s.agentId ?? ''} ${s.status}`.toLowerCase().includes(needle),
  );
  list.replaceChildren(
    ...shown.map((s) =>
      el(
        'li',
        {
          className: s.sessionKey === selected ? 'selected' : '',
          'data-session': s.sessionKey,
          onclick: () => onSelect(s.sessionKey),
        },
        el('div', { className: 'key' }, s.sessionKey),
        el(
          'div',
          { className: 'muted' },
          `${s.agentId ?? '(not a session)'} · `,
          el('span', { className: `status status-${s.status}` }, s.status.replace('_', ' ')),
          ` · v${s.version} · ${time(s.updatedAt)}`,
          s.pendingApprovals > 0 ? ` · ${s.pendingApprovals} pending` : '',
        ),
      ),
    ),
  );
  document.getElementById('sessions-empty').hidden = sessions.length > 0;
}
