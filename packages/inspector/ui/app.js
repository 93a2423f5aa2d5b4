// The inspector page. Plain DOM, no framework: every piece of session data goes into the page
// through textContent / text nodes (never innerHTML), so a message holding `<script>` shows as
// text. Diagrams are drawn by the Mermaid bundle the package ships, loaded on first use.

const state = {
  info: { mode: 'live', actions: { approve: false, fork: false, rewind: false }, by: 'inspector' },
  sessions: [],
  selected: undefined, // session key
  version: undefined, // a past version being viewed; undefined = current
  filter: '',
};

/** An element with attributes (`on*` keys become listeners) and children (strings become text). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'className') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return node;
}

function showError(message) {
  const box = document.getElementById('error');
  box.textContent = message;
  box.hidden = message === '';
}

async function api(path, body) {
  const init =
    body === undefined
      ? {}
      : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const res = await fetch(path, { ...init, credentials: 'same-origin' });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error ? `${data.error.code}: ${data.error.message}` : `HTTP ${res.status}`);
  return data;
}

function json(value) {
  return JSON.stringify(value, null, 2) ?? String(value);
}

function time(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleTimeString();
}

// ------------------------------------------------------------------ sessions list

async function loadSessions() {
  const { sessions } = await api('/api/sessions?limit=500');
  state.sessions = sessions;
  renderSessions();
}

function renderSessions() {
  const list = document.getElementById('session-list');
  const needle = state.filter.toLowerCase();
  const shown = state.sessions.filter(
    (s) => needle === '' || `${s.sessionKey} ${s.agentId ?? ''} ${s.status}`.toLowerCase().includes(needle),
  );
  list.replaceChildren(
    ...shown.map((s) =>
      el(
        'li',
        {
          className: s.sessionKey === state.selected ? 'selected' : '',
          'data-session': s.sessionKey,
          onclick: () => selectSession(s.sessionKey, undefined),
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
  document.getElementById('sessions-empty').hidden = state.sessions.length > 0;
}

// ------------------------------------------------------------------ one session

function selectSession(key, version) {
  state.selected = key;
  state.version = version;
  const hash = `#session=${encodeURIComponent(key)}${version === undefined ? '' : `&version=${version}`}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
  renderSessions();
  void loadDetail().catch((e) => showError(String(e.message ?? e)));
}

async function loadDetail() {
  const key = state.selected;
  if (key === undefined) return;
  const q = `key=${encodeURIComponent(key)}`;
  const v = state.version === undefined ? '' : `&version=${state.version}`;
  const [detail, history, timeline] = await Promise.all([
    api(`/api/session?${q}${v}`),
    api(`/api/history?${q}&limit=50`),
    api(`/api/timeline?${q}`),
  ]);
  if (key !== state.selected) return; // another session was chosen meanwhile
  const main = document.getElementById('detail');
  main.replaceChildren(
    header(detail.session),
    approvalsSection(detail.session),
    timelineSection(timeline, history.versions),
    chatSection(detail.session),
    versionsSection(detail.session, history.versions),
    diagramsSection(detail.diagrams),
  );
  void renderDiagrams(main);
}

function header(s) {
  const viewing = state.version !== undefined;
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
          el('button', { onclick: () => selectSession(s.sessionKey, undefined) }, 'Back to the current version'),
        )
      : undefined,
  );
}

function approvalsSection(s) {
  const pending = s.pendingApprovals ?? [];
  if (pending.length === 0 || state.version !== undefined) return el('section', { id: 'approvals', hidden: true });
  const canApprove = state.info.mode === 'live' && state.info.actions.approve;
  return el(
    'section',
    { id: 'approvals' },
    el('h2', {}, `Pending approvals (${pending.length})`),
    canApprove ? undefined : el('p', { className: 'muted' }, 'Approving needs a live runner with approve().'),
    ...pending.map((p) => {
      const reason = el('input', { type: 'text', placeholder: 'reason (optional)', 'aria-label': 'reason' });
      const decide = (approved) => () => {
        const decision = { id: p.id, approved, ...(reason.value !== '' && { reason: reason.value }) };
        api('/api/approve', { sessionKey: s.sessionKey, decisions: [decision] })
          .then(() => loadDetail())
          .catch((e) => showError(String(e.message ?? e)));
      };
      return el(
        'div',
        { className: 'approval', 'data-approval': p.id },
        el('div', {}, el('strong', {}, p.toolName), ` by ${p.agentId} · requested ${time(p.requestedAt)}`),
        p.reason ? el('div', { className: 'muted' }, `why: ${p.reason}`) : undefined,
        el('pre', {}, json(p.arguments)),
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

// ------------------------------------------------------------------ timeline

function timelineSection(timeline, versions) {
  const list = el('ul', { className: 'timeline', id: 'timeline' });
  if (timeline.live) {
    for (const entry of timeline.entries) list.append(entryItem(entry));
  } else {
    for (const v of versions) list.append(versionItem(v));
  }
  return el(
    'section',
    {},
    el('h2', {}, 'Timeline (newest first)'),
    timeline.live
      ? el(
          'p',
          { className: 'muted' },
          timeline.source === 'runner'
            ? "The runner's recent events for this session (its timeline), live."
            : 'Events seen since the inspector started (the most recent per session).',
        )
      : el('p', { className: 'muted' }, "Offline: from each version's cause."),
    list,
  );
}

function entryItem(e) {
  return el(
    'li',
    { 'data-entry-type': e.type, 'data-seq': e.seq },
    el('span', { className: 'when' }, time(e.at)),
    ...entryBody(e),
  );
}

function what(text) {
  return el('span', { className: 'what' }, text);
}

function entryBody(e) {
  switch (e.type) {
    case 'signal':
      return [what('signal'), e.kind, e.text !== undefined ? el('pre', { className: 'text' }, e.text) : undefined];
    case 'route':
      return routeBody(e);
    case 'transition':
      return [what('transition'), `${e.from} → ${e.to} via ${e.action}`, e.guard ? ` [guard ${e.guard}]` : ''];
    case 'engine':
      return engineBody(e.event);
    case 'outcome':
      return [
        what('outcome'),
        el('span', { className: `status status-${e.status}` }, e.status),
        ` · ${e.action}`,
        e.durationMs !== null ? ` · ${e.durationMs} ms` : '',
        e.pendingApprovals > 0 ? ` · ${e.pendingApprovals} approval(s) pending` : '',
        e.error ? el('pre', {}, `${e.error.code ?? e.error.name}: ${e.error.message}`) : undefined,
      ];
    case 'unrouted':
      return [what('unrouted'), `no route took the ${e.kind} signal`];
    case 'rewound':
      return [what('rewound'), `to version ${e.rewoundTo}, saved as version ${e.version}`];
    default:
      return [what(e.type)];
  }
}

function routeBody(e) {
  const parts = [
    what('route'),
    el('span', { className: 'tier' }, `tier ${e.tier ?? '—'}`),
    ' · ',
    el('span', { className: 'route-name' }, `route ${e.routeName ?? '(unnamed)'}`),
    ` · ${e.action}`,
  ];
  if (e.considered === null) return parts;
  const losers = e.considered.filter((c) => c.outcome !== 'matched');
  parts.push(
    el(
      'ul',
      { className: 'considered' },
      losers.length === 0 ? el('li', { className: 'muted' }, 'no other route was considered') : undefined,
      ...losers.map((c) =>
        el(
          'li',
          { className: 'loser' },
          `beat: ${c.tier} · ${c.routeName ?? '(unnamed)'} · ${c.outcome.replaceAll('_', ' ')}`,
        ),
      ),
    ),
  );
  return parts;
}

function engineBody(ev) {
  switch (ev.type) {
    case 'handoff':
      return [what('handoff'), `${ev.from} → ${ev.to} (via ${ev.via}${ev.signal ? ` ${ev.signal}` : ''})`];
    case 'tool_start':
      return [what('tool call'), `${ev.call?.name ?? '?'} by ${ev.agentId}`, el('pre', {}, json(ev.call?.arguments))];
    case 'tool_result':
      return [what(ev.isError ? 'tool error' : 'tool result'), ev.call?.name ?? '?', el('pre', {}, json(ev.result))];
    case 'approval_requested':
      return [what('approval requested'), (ev.approvals ?? []).map((a) => `${a.toolName} (${a.id})`).join(', ')];
    case 'approval_resolved':
      return [what('approval'), `${ev.id} ${ev.approved ? 'approved' : 'denied'}${ev.reason ? `: ${ev.reason}` : ''}`];
    case 'stage_start':
      return [what('stage start'), String(ev.stage)];
    case 'stage_end':
      return [what('stage end'), String(ev.stage), ev.status ? ` · ${ev.status}` : ''];
    case 'interrupt':
      return [what('interrupt'), el('pre', {}, json(ev.interrupt))];
    case 'agent_start':
      return [what('agent'), `${ev.agentId} starts`];
    case 'agent_response':
      return [what('agent reply'), ev.agentId, el('pre', { className: 'text' }, ev.content ?? '')];
    default:
      return [what(String(ev.type)), el('pre', {}, json(ev))];
  }
}

function causeText(cause) {
  if (cause === undefined) return 'saved';
  if (cause.forkedFrom) return `forked from ${cause.forkedFrom.sessionKey} version ${cause.forkedFrom.version}`;
  if (cause.rewoundTo !== undefined) return `rewound to version ${cause.rewoundTo}`;
  const parts = [];
  if (cause.signal)
    parts.push(`${cause.signal.kind}${cause.signal.text !== undefined ? ` “${cause.signal.text}”` : ''}`);
  if (cause.tier) parts.push(`tier ${cause.tier}`);
  if (cause.routeName) parts.push(`route ${cause.routeName}`);
  if (cause.status) parts.push(cause.status);
  if (cause.approvals) {
    parts.push(
      cause.approvals
        .map((a) => `${a.id} ${a.approved ? 'approved' : 'denied'}${a.by ? ` by ${a.by}` : ''}`)
        .join(', '),
    );
  }
  return parts.join(' · ');
}

function versionItem(v) {
  return el(
    'li',
    { 'data-entry-type': 'version' },
    el('span', { className: 'when' }, time(v.updatedAt)),
    what(`version ${v.version}`),
    causeText(v.cause),
  );
}

// ------------------------------------------------------------------ chat and versions

function chatSection(s) {
  const items =
    s.transcript !== null
      ? s.transcript.map((t) => {
          if (t.type === 'user')
            return el('li', { className: 'user' }, el('span', { className: 'who' }, 'user'), t.text);
          if (t.type === 'assistant') return el('li', {}, el('span', { className: 'who' }, t.agentId), t.text);
          if (t.type === 'handoff') return el('li', { className: 'muted' }, `handoff ${t.from} → ${t.to} (${t.via})`);
          const result = t.result === undefined ? '' : ` → ${typeof t.result === 'string' ? t.result : json(t.result)}`;
          return el('li', { className: 'muted' }, `tool ${t.call?.name ?? '?'}: ${t.status}${result}`);
        })
      : s.history.map((m) =>
          el('li', { className: m.role }, el('span', { className: 'who' }, m.name ?? m.role), m.content),
        );
  return el(
    'section',
    {},
    el('h2', {}, 'Chat'),
    items.length === 0
      ? el('p', { className: 'muted' }, 'No messages.')
      : el('ul', { className: 'chat', id: 'chat' }, items),
  );
}

function versionsSection(s, versions) {
  const canFork = state.info.mode === 'live' && state.info.actions.fork;
  const rows = versions.map((v) => {
    const target = el('input', { type: 'text', placeholder: 'new session key', 'aria-label': 'new session key' });
    const fork = () =>
      api('/api/fork', { from: s.sessionKey, to: target.value, version: v.version })
        .then(async (r) => {
          await loadSessions();
          selectSession(r.session.sessionKey, undefined);
        })
        .catch((e) => showError(String(e.message ?? e)));
    return el(
      'tr',
      { 'data-version': v.version },
      el('td', {}, String(v.version)),
      el('td', {}, time(v.updatedAt)),
      el('td', {}, causeText(v.cause)),
      el(
        'td',
        {},
        el('button', { className: 'view', onclick: () => selectSession(s.sessionKey, v.version) }, 'View'),
        canFork ? [' ', target, ' ', el('button', { className: 'fork', onclick: fork }, 'Fork from here')] : undefined,
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

// ------------------------------------------------------------------ diagrams

function diagramsSection(diagrams) {
  const kinds = ['fsm', 'crew', 'pipeline'].filter((k) => typeof diagrams[k] === 'string');
  if (kinds.length === 0) return el('section', { id: 'diagrams', hidden: true });
  return el(
    'section',
    { id: 'diagrams' },
    el('h2', {}, 'Diagrams'),
    ...kinds.map((k) =>
      el(
        'div',
        {},
        el('h3', {}, k === 'fsm' ? 'FSM (current state highlighted)' : k),
        el('div', { className: 'diagram', 'data-diagram': k, 'data-source': diagrams[k] }, 'drawing…'),
      ),
    ),
  );
}

let mermaidLoading;
function loadMermaid() {
  mermaidLoading ??= new Promise((resolve, reject) => {
    const script = el('script', { src: '/assets/mermaid.min.js' });
    script.addEventListener('load', () => {
      window.mermaid.initialize({
        startOnLoad: false,
        securityLevel: 'strict',
        htmlLabels: false,
        flowchart: { htmlLabels: false },
      });
      resolve(window.mermaid);
    });
    script.addEventListener('error', () => reject(new Error('the diagram library could not be loaded')));
    document.head.append(script);
  });
  return mermaidLoading;
}

let diagramId = 0;
async function renderDiagrams(root) {
  const boxes = [...root.querySelectorAll('[data-diagram]')];
  if (boxes.length === 0) return;
  let mermaid;
  try {
    mermaid = await loadMermaid();
  } catch (e) {
    for (const box of boxes) box.textContent = String(e.message);
    return;
  }
  for (const box of boxes) {
    try {
      const { svg } = await mermaid.render(`diagram-${++diagramId}`, box.getAttribute('data-source'));
      // Parsed as XML and imported, with anything active removed: never innerHTML.
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      for (const bad of doc.querySelectorAll('script, foreignObject iframe')) bad.remove();
      for (const node of doc.querySelectorAll('*')) {
        for (const attr of [...node.attributes]) if (/^on/i.test(attr.name)) node.removeAttribute(attr.name);
      }
      box.replaceChildren(document.importNode(doc.documentElement, true));
    } catch (e) {
      box.textContent = `This diagram could not be drawn: ${String(e.message ?? e)}`;
    }
  }
}

// ------------------------------------------------------------------ live updates

let sessionsTimer;
function refreshSessionsSoon() {
  clearTimeout(sessionsTimer);
  sessionsTimer = setTimeout(() => void loadSessions().catch((e) => showError(String(e.message ?? e))), 150);
}

let detailTimer;
function refreshDetailSoon() {
  clearTimeout(detailTimer);
  detailTimer = setTimeout(() => void loadDetail().catch((e) => showError(String(e.message ?? e))), 150);
}

function connectEvents() {
  const source = new EventSource('/api/events');
  const liveState = document.getElementById('live-state');
  source.addEventListener('open', () => {
    liveState.textContent = 'connected';
  });
  source.addEventListener('error', () => {
    liveState.textContent = 'reconnecting…';
  });
  source.addEventListener('entry', (message) => {
    const entry = JSON.parse(message.data);
    refreshSessionsSoon();
    if (entry.sessionKey !== state.selected || state.version !== undefined) return;
    const list = document.getElementById('timeline');
    if (list !== null && list.querySelector(`[data-seq="${entry.seq}"]`) === null) list.prepend(entryItem(entry));
    if (entry.type === 'outcome' || entry.type === 'rewound') refreshDetailSoon();
  });
}

// ------------------------------------------------------------------ start

async function start() {
  state.info = await api('/api/info');
  const mode = document.getElementById('mode');
  mode.textContent = state.info.mode;
  document.getElementById('offline-note').hidden = state.info.mode !== 'offline';
  document.getElementById('filter').addEventListener('input', (e) => {
    state.filter = e.target.value;
    renderSessions();
  });
  await loadSessions();
  if (state.info.mode === 'live') connectEvents();
  const params = new URLSearchParams(location.hash.slice(1));
  const key = params.get('session');
  if (key !== null) {
    const version = params.get('version');
    selectSession(key, version === null ? undefined : Number(version));
  }
  document.body.setAttribute('data-ready', 'true');
}

start().catch((e) => showError(String(e.message ?? e)));
