// Live updates: timeline entries arrive over the event stream; the sessions list and an open
// session refresh when they change; after a reconnection the page catches up on what it missed.
import { reportError } from './dom.js';
import { loadDetail, loadSessions } from './controller.js';
import { connectEventStream } from './event-stream.js';
import { state } from './state.js';
import { entryItem } from './timeline-view.js';

/** Calls `load` once, 150 ms after the last of a burst of calls. */
function debounced(load) {
  let timer;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(() => void load().catch(reportError), 150);
  };
}

const refreshSessionsSoon = debounced(loadSessions);
const refreshDetailSoon = debounced(loadDetail);

function stateText(s) {
  switch (s.state) {
    case 'connected':
      return 'connected';
    case 'waiting':
      return `waiting: too many pages are open, retrying in ${Math.ceil(s.retryMs / 1000)} s…`;
    case 'refused':
      return `disconnected (HTTP ${s.status}): open the inspector's address again`;
    default:
      return 'reconnecting…';
  }
}

function showEntry(entry) {
  refreshSessionsSoon();
  if (entry.sessionKey !== state.selected || state.version !== undefined) return;
  const list = document.getElementById('timeline');
  if (list !== null && list.querySelector(`[data-seq="${entry.seq}"]`) === null) list.prepend(entryItem(entry));
  if (entry.type === 'outcome' || entry.type === 'rewound') refreshDetailSoon();
}

/** Connects the page to the inspector's event stream. */
export function startLiveUpdates() {
  const liveState = document.getElementById('live-state');
  connectEventStream({
    url: '/api/events',
    onState: (s) => {
      liveState.textContent = stateText(s);
      liveState.dataset.state = s.state;
    },
    onOpen: ({ reconnected }) => {
      if (!reconnected) return; // opened at once: what the page loaded is current
      refreshSessionsSoon();
      refreshDetailSoon();
    },
    onEvent: (name, data) => {
      if (name === 'entry') showEntry(JSON.parse(data));
    },
  });
}
