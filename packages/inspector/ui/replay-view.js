// A replay report (`signalyard replay --json`, or the inspector's `replayReport` file): every
// session's outcome, and a chosen session's recorded and replayed runs side by side, turn by
// turn, with the fields that differ marked and the first divergence highlighted.
import { el, lines } from './dom.js';
import { SUMMARY_FIELDS, countsText, differingFields, fieldOfPath, fieldText } from './replay-text.js';

/** What a session's row says after its status: the first divergence, the error, or where it stopped. */
function outcomeText(s) {
  if (s.divergence !== undefined) return s.divergence.text;
  if (s.error !== undefined) return `${s.error.code === undefined ? '' : `${s.error.code}: `}${s.error.message}`;
  if (s.partial !== undefined) return `partial: ${s.partial.reason}`;
  return '';
}

const cell = (text, attrs = {}) => el('td', attrs, lines(text));

/** The rows of one turn: a field per row, recorded beside today's, differing ones marked. */
function turnRows(turn, divergence) {
  const first = divergence !== undefined && divergence.turn === turn.turn ? fieldOfPath(divergence.path) : undefined;
  const differs = differingFields(turn.expected, turn.actual);
  const replayed = turn.actual !== undefined && turn.actual !== null;
  const rows = [];
  for (const [field, label] of SUMMARY_FIELDS) {
    const before = fieldText(turn.expected, field);
    const after = replayed ? fieldText(turn.actual, field) : '';
    if (before === '' && after === '' && field !== first) continue;
    const classes = [differs.has(field) ? 'differs' : '', field === first ? 'first-divergence' : ''].join(' ').trim();
    rows.push(
      el(
        'tr',
        { className: classes, 'data-field': field },
        el('th', {}, label),
        cell(before, { className: 'recorded' }),
        replayed ? cell(after, { className: 'today' }) : el('td', { className: 'today muted' }, '(not replayed)'),
      ),
    );
  }
  // A divergence outside the summary (a model call or tool call the cassette does not hold, a prompt edit).
  if (first !== undefined && !SUMMARY_FIELDS.some(([f]) => f === first)) {
    rows.push(
      el(
        'tr',
        { className: 'differs first-divergence', 'data-field': first },
        el('th', {}, divergence.path),
        cell(JSON.stringify(divergence.expected) ?? '(none)', { className: 'recorded' }),
        cell(JSON.stringify(divergence.actual) ?? '(none)', { className: 'today' }),
      ),
    );
  }
  return rows;
}

/** One session's two runs side by side. */
function sessionDetail(s) {
  return el(
    'section',
    { id: 'replay-session', 'data-session': s.sessionKey },
    el('h3', {}, s.sessionKey),
    el(
      'p',
      { className: s.divergence === undefined ? 'muted' : 'divergence' },
      s.divergence === undefined
        ? `${s.status}: ${outcomeText(s) || 'both runs agree on every turn'}`
        : `First divergence: ${s.divergence.text}`,
    ),
    el(
      'table',
      { className: 'side-by-side' },
      el('tr', {}, el('th', {}, ''), el('th', {}, 'recorded'), el('th', {}, 'today')),
      ...s.turns.map((turn) =>
        el(
          'tbody',
          {
            'data-turn': turn.turn,
            className: s.divergence !== undefined && s.divergence.turn === turn.turn ? 'diverged-turn' : '',
          },
          el('tr', { className: 'turn-head' }, el('th', { colspan: 3 }, `turn ${turn.turn}`)),
          ...turnRows(turn, s.divergence),
        ),
      ),
    ),
  );
}

/** Renders `report` into the page's main area; `selected` (a session key) opens that session's runs. */
export function renderReplay(report, { selected, onSelect, source }) {
  const chosen = report.sessions.find((s) => s.sessionKey === selected);
  document.getElementById('detail').replaceChildren(
    el(
      'section',
      { id: 'replay' },
      el('h2', {}, 'Replay report'),
      el('p', { className: 'muted' }, `${source} · ${countsText(report)}`),
      el(
        'table',
        { id: 'replay-sessions' },
        el('tr', {}, el('th', {}, 'session'), el('th', {}, 'status'), el('th', {}, 'first divergence')),
        ...report.sessions.map((s) =>
          el(
            'tr',
            {
              'data-session': s.sessionKey,
              'data-status': s.status,
              className: s.sessionKey === selected ? 'selected' : '',
              onclick: () => onSelect(s.sessionKey),
            },
            el('td', { className: 'mono' }, s.sessionKey),
            el('td', {}, el('span', { className: `status replay-${s.status}` }, s.status)),
            el('td', {}, outcomeText(s)),
          ),
        ),
      ),
      chosen === undefined ? undefined : sessionDetail(chosen),
    ),
  );
}
