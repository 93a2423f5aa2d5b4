// The inspector page. Plain DOM and ES modules served as they are, no framework, no build:
//   app.js           start: the mode, the filter, the first load, live updates, the address's session
//   controller.js    loads from the API into state.js and renders; the actions (select, approve, fork)
//   sessions-view.js, timeline-view.js, session-sections.js, diagrams-view.js, inbox-view.js   what is shown
//   replay-controller.js, replay-view.js, replay-text.js   a replay report, two runs side by side
//   live-updates.js  timeline entries as they happen, over event-stream.js (SSE over fetch)
//   dom.js, visible-text.js, api.js   building blocks: elements, escaped text, the JSON API
import { api } from './api.js';
import { loadSessions, selectSession, showSessions } from './controller.js';
import { reportError } from './dom.js';
import { startLiveUpdates } from './live-updates.js';
import { startReplayControls } from './replay-controller.js';
import { state } from './state.js';

async function start() {
  state.info = await api('/api/info');
  document.getElementById('mode').textContent = state.info.mode;
  document.getElementById('offline-note').hidden = state.info.mode !== 'offline';
  document.getElementById('filter').addEventListener('input', (e) => {
    state.filter = e.target.value;
    showSessions();
  });
  await loadSessions();
  if (state.info.mode === 'live') startLiveUpdates();
  await startReplayControls(state.info);
  const params = new URLSearchParams(location.hash.slice(1));
  const key = params.get('session');
  if (key !== null) {
    const version = params.get('version');
    selectSession(key, version === null ? undefined : Number(version));
  }
  document.body.setAttribute('data-ready', 'true');
}

start().catch(reportError);
