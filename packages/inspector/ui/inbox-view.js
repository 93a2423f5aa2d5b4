// The durable inbox, when the inspector was given one: a session's entries waiting to be settled
// with the lease holding it (in the session's view), and the panel under the sessions list with
// the sessions that have entries waiting, every lease held and the dead letters.
import { el, time } from './dom.js';

/** A lease as text: `leased by w1 until 10:42:07`, or that no worker holds the session. */
function leaseText(lease) {
  return lease === null || lease === undefined
    ? 'no worker holds it: the next worker to poll takes it'
    : `leased by ${lease.workerId} until ${time(lease.expiresAt)}`;
}

/** An entry's row: seq, kind (or control), deliveries begun, when accepted, the start of its text. */
function entryRow(e) {
  return el(
    'tr',
    { 'data-seq': e.seq, 'data-receipt': e.receiptId },
    el('td', { className: 'num' }, e.seq),
    el('td', {}, e.kind),
    el('td', { className: 'num' }, String(e.attempts)),
    el('td', {}, time(e.acceptedAt)),
    el('td', { className: 'mono' }, e.text ?? ''),
  );
}

/** The session's inbox section: its entries waiting (seq order) and its lease; hidden without an inbox. */
export function inboxSection(data) {
  if (data === undefined) return el('section', { id: 'inbox', hidden: true });
  return el(
    'section',
    { id: 'inbox' },
    el('h2', {}, `Inbox: ${data.entries.length} waiting`),
    el('p', { className: 'muted lease' }, leaseText(data.lease)),
    data.entries.length === 0
      ? el('p', { className: 'muted' }, 'Every accepted signal of this session is settled.')
      : el(
          'table',
          {},
          el(
            'tr',
            {},
            el('th', {}, 'seq'),
            el('th', {}, 'kind'),
            el('th', {}, 'attempts'),
            el('th', {}, 'accepted'),
            el('th', {}, 'text'),
          ),
          ...data.entries.map(entryRow),
        ),
  );
}

/** Renders the inbox panel (sessions waiting, leases, dead letters); a session's name selects it. */
export function renderInboxPanel(overview, onSelect) {
  const panel = document.getElementById('inbox-panel');
  panel.hidden = false;
  const link = (key) =>
    el('a', { href: '#', className: 'mono', onclick: (e) => (e.preventDefault(), onSelect(key)) }, key);
  panel.replaceChildren(
    el('h2', {}, 'Inbox'),
    el(
      'ul',
      { id: 'inbox-waiting' },
      overview.pending.length === 0 ? el('li', { className: 'muted' }, 'nothing waiting') : undefined,
      ...overview.pending.map((p) =>
        el('li', { 'data-session': p.sessionKey }, link(p.sessionKey), ` · ${p.count} waiting`),
      ),
    ),
    el('h3', {}, `Leases (${overview.leases.length})`),
    el(
      'ul',
      { id: 'inbox-leases' },
      ...overview.leases.map((l) =>
        el('li', { 'data-session': l.key }, link(l.key), ` · ${l.workerId} until ${time(l.expiresAt)}`),
      ),
    ),
    el('h3', {}, `Dead letters (${overview.dead.length})`),
    el(
      'ul',
      { id: 'dead-letters' },
      ...overview.dead.map((d) =>
        el(
          'li',
          { 'data-session': d.entry.sessionKey, 'data-receipt': d.entry.receiptId },
          link(d.entry.sessionKey),
          ` · seq ${d.entry.seq} · ${d.entry.attempts} deliveries`,
          el('div', { className: 'error-text' }, d.error === null ? 'failed' : `${d.error.code}: ${d.error.message}`),
        ),
      ),
    ),
  );
}
