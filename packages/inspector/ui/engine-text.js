// How the page says what happened, in words (no DOM: tested in Node) — a crew's handoff, an
// approvals policy's decision, how a run ended, a route decision, why a version exists, a chat
// message with its routing markers hidden.

/**
 * A `handoff` engine event in words: who to whom and how — `triage → billing (signal [ROUTE_BILLING])`
 * for a marker, `triage → billing (transfer_to_billing)` for a transfer tool call, `(parallel)` /
 * `(fallback)` otherwise; a parallel group's member names its group. The model's `reason` for a
 * transfer, when it gave one, is separate.
 */
export function handoffText(ev) {
  const how =
    typeof ev.tool === 'string' ? ev.tool : `via ${ev.via}${typeof ev.signal === 'string' ? ` ${ev.signal}` : ''}`;
  const group = typeof ev.group === 'string' ? `, group ${ev.group}` : '';
  return `${ev.from} → ${ev.to} (${how}${group})`;
}

const VERB = { allow: 'allowed', ask: 'held for a person', deny: 'denied' };

/**
 * What an approvals policy decided, in words: `allowed by rule refunds-under-100`, `held for a
 * person by rule 1`, `allowed by the policy's default`. `d`: `{ decision, rule?, ruleName? }`
 * (an `approval_decided` event, a transcript entry's `approval` with `rule` as the name, or a
 * `cause.summary.approvals` entry).
 */
export function decisionText(d) {
  const verb = VERB[d.decision] ?? String(d.decision);
  const name = typeof d.ruleName === 'string' ? d.ruleName : typeof d.rule === 'string' ? d.rule : undefined;
  if (name !== undefined) return `${verb} by rule ${name}`;
  if (typeof d.rule === 'number') return `${verb} by rule ${d.rule + 1} (unnamed)`;
  return `${verb} by the policy's default`;
}

/** An `approval_decided` event in words: `refund (call c1) allowed by rule refunds-under-100`. */
export function approvalDecidedText(ev) {
  const reason = typeof ev.reason === 'string' ? `: ${ev.reason}` : '';
  const group = typeof ev.group === 'string' ? ` in group ${ev.group}` : '';
  return `${ev.toolName} by ${ev.agentId}${group} ${decisionText(ev)}${reason}`;
}

const END_REASONS = {
  terminated_by_signal: 'ended the run by its signal',
  terminal_agent: 'ended the run (a terminal agent)',
  max_handoffs: 'ended the run: max_handoffs reached',
  max_rounds: 'ended the run: max_rounds reached',
  no_next_agent: 'ended the run: no next agent',
};

/** A crew's `terminate` event in words: `billing ended the run by its signal [DONE]`. */
export function terminateText(ev) {
  const how = END_REASONS[ev.reason] ?? `ended the run (${ev.reason})`;
  const by = typeof ev.tool === 'string' ? ` (${ev.tool})` : typeof ev.signal === 'string' ? ` ${ev.signal}` : '';
  return `${ev.agentId} ${how}${by}`;
}

/** Any other engine event in words: its fields as `key value`, nested values flattened to text. */
export function eventFieldsText(ev) {
  return Object.entries(ev)
    .filter(([key, value]) => key !== 'type' && value !== undefined)
    .map(([key, value]) => `${key} ${valueText(value)}`)
    .join(' · ');
}

function valueText(value) {
  if (Array.isArray(value)) return value.map(valueText).join(', ');
  if (typeof value === 'object' && value !== null) {
    if (typeof value.message === 'string') return value.message;
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${valueText(v)}`)
      .join(', ');
  }
  return String(value);
}

/**
 * A route decision in words: `tier agent · route open-ticket · transition(open)`; with no route
 * (a runner default applied) `no route matched: runner default → continue`.
 */
export function routeText(e) {
  if (e.tier === null || e.tier === undefined) return `no route matched: runner default → ${e.action}`;
  return `tier ${e.tier} · route ${e.routeName ?? '(unnamed)'} · ${e.action}`;
}

/** What a version's `cause` says, in one line. */
export function causeText(cause) {
  if (cause === undefined) return 'saved';
  if (cause.forkedFrom) return `forked from ${cause.forkedFrom.sessionKey} version ${cause.forkedFrom.version}`;
  if (cause.rewoundTo !== undefined) return `rewound to version ${cause.rewoundTo}`;
  const parts = [];
  if (cause.signal)
    parts.push(`${cause.signal.kind}${cause.signal.text !== undefined ? ` “${cause.signal.text}”` : ''}`);
  // A signal's version without a status was saved by a commit in the middle of its turn (ctx.commit).
  if (cause.signal && cause.status === undefined) parts.push('saved mid-turn (a commit before the turn ended)');
  if (cause.tier) parts.push(`tier ${cause.tier}`);
  if (cause.routeName) parts.push(`route ${cause.routeName}`);
  if (cause.signal && !cause.tier && cause.status !== undefined) parts.push('no route matched: runner default');
  if (cause.status) parts.push(cause.status);
  if (cause.approvals) {
    parts.push(
      cause.approvals
        .map((a) => `${a.id} ${a.approved ? 'approved' : 'denied'}${a.by ? ` by ${a.by}` : ''}`)
        .join(', '),
    );
  }
  for (const a of cause.summary?.approvals ?? []) parts.push(`${a.tool} ${decisionText(a)}`);
  return parts.join(' · ');
}

// A routing marker as crews write them: `[ROUTE_BILLING]`, `[done]`, with the whitespace before it.
const MARKER = /\s*\[[A-Za-z][A-Za-z0-9_:-]*\]/g;

/**
 * A stored message's text as a chat shows it with routing markers hidden, for the offline page,
 * which has no crew to ask: every `[MARKER]`-shaped span removed with the whitespace before it,
 * then trimmed (the live page shows the crew's own transcript, hidden the same way).
 */
export function withoutMarkers(text) {
  return String(text).replace(MARKER, '').trim();
}
