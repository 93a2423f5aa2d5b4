// What the page does: loads the sessions and the chosen session from the API into `state` and
// renders them, and carries out the actions the views offer (select, approve, fork, rewind).
import { api } from './api.js';
import { reportError } from './dom.js';
import { diagramsSection, renderDiagrams } from './diagrams-view.js';
import { inboxSection, renderInboxPanel } from './inbox-view.js';
import { approvalsSection, chatSection, header, unsavedHeader, versionsSection } from './session-sections.js';
import { renderSessions } from './sessions-view.js';
import { state } from './state.js';
import { timelineSection } from './timeline-view.js';

/** Renders the sessions list from `state`. */
export function showSessions() {
  renderSessions({
    sessions: state.sessions,
    filter: state.filter,
    selected: state.selected,
    onSelect: (key) => selectSession(key, undefined),
  });
}

/** Loads the sessions list (and, with an inbox, its panel) and renders them. */
export async function loadSessions() {
  const [{ sessions }, overview] = await Promise.all([
    api('/api/sessions?limit=500'),
    state.info.inbox ? api('/api/inbox/overview') : undefined,
  ]);
  state.sessions = sessions;
  showSessions();
  if (overview !== undefined) renderInboxPanel(overview, (key) => selectSession(key, undefined));
}

/** Shows session `key` (its `version`, or the current one when `undefined`), keeping the choice in the address. */
export function selectSession(key, version) {
  state.selected = key;
  state.version = version;
  const hash = `#session=${encodeURIComponent(key)}${version === undefined ? '' : `&version=${version}`}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
  showSessions();
  void loadDetail().catch(reportError);
}

/** Loads the chosen session, its versions and its timeline, and renders them. */
export async function loadDetail() {
  const key = state.selected;
  if (key === undefined) return;
  const q = `key=${encodeURIComponent(key)}`;
  const v = state.version === undefined ? '' : `&version=${state.version}`;
  // A session whose first entries still wait in the inbox has nothing saved yet: not an error.
  const saved = (call) =>
    call.catch((error) => {
      if (state.info.inbox && state.version === undefined && String(error.message).startsWith('not_found:'))
        return undefined;
      throw error;
    });
  const [detail, history, timeline, inbox] = await Promise.all([
    saved(api(`/api/session?${q}${v}`)),
    saved(api(`/api/history?${q}&limit=50`)),
    saved(api(`/api/timeline?${q}`)),
    state.info.inbox ? api(`/api/inbox?${q}`) : undefined,
  ]);
  if (key !== state.selected) return; // another session was chosen meanwhile
  const main = document.getElementById('detail');
  if (detail === undefined) {
    main.replaceChildren(unsavedHeader(key), inboxSection(inbox));
    return;
  }
  const session = detail.session;
  const viewing = state.version !== undefined;
  const live = state.info.mode === 'live';
  main.replaceChildren(
    header(session, { viewing, onSelect: selectSession }),
    approvalsSection(session, {
      viewing,
      canApprove: live && state.info.actions.approve,
      onDecide: (decision) => approve(session.sessionKey, decision),
    }),
    inboxSection(inbox),
    timelineSection(timeline, history.versions),
    chatSection(session),
    versionsSection(session, history.versions, {
      canFork: live && state.info.actions.fork,
      canRewind: live && state.info.actions.rewind && !viewing,
      onSelect: selectSession,
      onFork: (version, to) => fork(session.sessionKey, version, to),
      onRewind: (version) => rewind(session.sessionKey, version),
    }),
    diagramsSection(detail.diagrams),
  );
  void renderDiagrams(main);
}

function approve(sessionKey, decision) {
  api('/api/approve', { sessionKey, decisions: [decision] })
    .then(() => loadDetail())
    .catch(reportError);
}

function rewind(sessionKey, version) {
  api('/api/rewind', { sessionKey, version })
    .then(async () => {
      await loadSessions();
      selectSession(sessionKey, undefined);
    })
    .catch(reportError);
}

function fork(from, version, to) {
  api('/api/fork', { from, to, version })
    .then(async (r) => {
      await loadSessions();
      selectSession(r.session.sessionKey, undefined);
    })
    .catch(reportError);
}
