// Opening a replay report: from the inspector (its `replayReport` file, at `#replay`) or from a
// file on this computer (read in the page; nothing is uploaded). The address keeps the chosen
// session (`#replay=<session key>`), so a reload shows the same runs.
import { api } from './api.js';
import { reportError } from './dom.js';
import { reportProblem } from './replay-text.js';
import { renderReplay } from './replay-view.js';

let opened; // { report, source }

function show(selected) {
  if (opened === undefined) return;
  const hash = selected === undefined ? '#replay' : `#replay=${encodeURIComponent(selected)}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
  renderReplay(opened.report, { selected, source: opened.source, onSelect: (key) => show(key) });
}

function open(report, source, selected) {
  const problem = reportProblem(report);
  if (problem !== undefined) throw new Error(`${source}: ${problem}`);
  opened = { report, source };
  show(selected ?? (report.sessions.find((s) => s.status !== 'same') ?? report.sessions[0])?.sessionKey);
}

/** Opens the inspector's replay report (its `replayReport` option), showing session `selected`, else the first that is not `same`, else the first. */
async function openServerReplay(selected) {
  open(await api('/api/replay'), 'the inspector’s replay report', selected);
}

/** Wires the "Open a replay report" controls; opens the report the address names. */
export function startReplayControls(info) {
  const button = document.getElementById('replay-open');
  button.hidden = !info.replay;
  button.addEventListener('click', () => void openServerReplay(undefined).catch(reportError));
  document.getElementById('replay-file').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    if (file === undefined) return;
    file
      .text()
      .then((text) => open(JSON.parse(text), file.name, undefined))
      .catch(reportError);
  });
  const m = /^#replay(?:=(.*))?$/.exec(location.hash);
  if (m !== null && info.replay) return openServerReplay(m[1] === undefined ? undefined : decodeURIComponent(m[1]));
  return Promise.resolve();
}
