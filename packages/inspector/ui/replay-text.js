// A replay report as text, without the DOM (run in Node by the page-logic tests): the rows of a
// turn's summary, which fields two summaries disagree on, the field a divergence names, and
// whether a file opened from disk is a report at all.

const STATUSES = new Set(['same', 'diverged', 'failed', 'partial']);

/** The fields of a `RunSummary` shown side by side, in this order, with their labels. */
export const SUMMARY_FIELDS = [
  ['status', 'status'],
  ['route', 'route'],
  ['action', 'action'],
  ['handoffs', 'handoffs'],
  ['toolCalls', 'tool calls'],
  ['approvals', 'approvals'],
  ['reply', 'reply'],
  ['fsmState', 'FSM state'],
];

const compact = (value) => JSON.stringify(value) ?? String(value);

/** One field of a summary as text (`''` when the summary has none). */
export function fieldText(summary, field) {
  if (summary === undefined || summary === null) return '';
  const v = summary[field];
  if (v === undefined || v === null) return '';
  switch (field) {
    case 'route':
      return `${v.tier}: ${v.name === '' ? '(unnamed)' : v.name}`;
    case 'handoffs':
      return v.map((h) => `${h.from} → ${h.to} (${h.signal})`).join('\n');
    case 'toolCalls':
      return v
        .map((c) => `${c.agentId === undefined ? '' : `${c.agentId}: `}${c.name}(${compact(c.arguments)})`)
        .join('\n');
    case 'approvals':
      return v.map((a) => `${a.tool}: ${a.decision}${a.rule === undefined ? '' : ` (rule ${a.rule})`}`).join('\n');
    default:
      return typeof v === 'string' ? v : compact(v);
  }
}

/** The summary field a divergence's path names: `handoffs[1].to` → `handoffs`, `modelCalls[0]…` → `modelCalls`. */
export function fieldOfPath(path) {
  const m = /^[A-Za-z_$][\w$]*/.exec(String(path ?? ''));
  return m === null ? '' : m[0];
}

/** The summary fields whose text differs between the recorded and the replayed run of a turn (none when it was not replayed). */
export function differingFields(expected, actual) {
  if (actual === undefined || actual === null) return new Set();
  return new Set(SUMMARY_FIELDS.map(([f]) => f).filter((f) => fieldText(expected, f) !== fieldText(actual, f)));
}

/** What is wrong with `value` as a replay report (the JSON `signalyard replay --json` prints), or `undefined`. */
export function reportProblem(value) {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'expected a replay report: the JSON `signalyard replay --json` prints';
  if (!Array.isArray(value.sessions)) return 'expected a replay report with a list of sessions';
  for (const [i, s] of value.sessions.entries()) {
    if (typeof s !== 'object' || s === null || typeof s.sessionKey !== 'string' || !Array.isArray(s.turns))
      return `sessions[${i}] is not a replayed session (sessionKey, status, turns)`;
    if (!STATUSES.has(s.status))
      return `sessions[${i}].status ${compact(s.status)} is not same, diverged, failed or partial`;
  }
  return undefined;
}

/** The counts line of a report: `3 sessions · 2 same · 1 diverged · 0 failed · 0 partial`. */
export function countsText(report) {
  const n = (status) => report.sessions.filter((s) => s.status === status).length;
  return `${report.sessions.length} sessions · ${n('same')} same · ${n('diverged')} diverged · ${n('failed')} failed · ${n('partial')} partial`;
}
