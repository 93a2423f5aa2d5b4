// A session's timeline, newest first: live, the runner's events (signal, route decision with the
// routes it beat, transition, engine events, outcome); offline, each version's cause.
import { el, json, lines, time, what } from './dom.js';
import { handoffText } from './engine-text.js';

/** The timeline section: `timeline` (from /api/timeline) when live, else one item per version. */
export function timelineSection(timeline, versions) {
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

/** One timeline entry as a list item (`data-seq` lets a live entry be added once). */
export function entryItem(e) {
  return el(
    'li',
    { 'data-entry-type': e.type, 'data-seq': e.seq },
    el('span', { className: 'when' }, time(e.at)),
    ...entryBody(e),
  );
}

/** A `<pre>` block of text or JSON. */
function block(text, className) {
  return el('pre', className === undefined ? {} : { className }, lines(text));
}

function entryBody(e) {
  switch (e.type) {
    case 'signal':
      return [what('signal'), e.kind, e.text !== undefined ? block(e.text, 'text') : undefined];
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
        e.error ? block(`${e.error.code ?? e.error.name}: ${e.error.message}`) : undefined,
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
      // A transfer tool call shows as the handoff it made, with the model's reason when it gave one.
      return [
        what('handoff'),
        handoffText(ev),
        typeof ev.reason === 'string' ? block(`reason: ${ev.reason}`, 'text') : undefined,
      ];
    case 'tool_start':
      return [
        what('tool call'),
        `${ev.call?.name ?? '?'}${mcpText(ev)} by ${ev.agentId}`,
        block(json(ev.call?.arguments)),
      ];
    case 'tool_result':
      return [
        what(ev.isError ? 'tool error' : 'tool result'),
        `${ev.call?.name ?? '?'}${mcpText(ev)}`,
        block(json(ev.result)),
      ];
    case 'tool_progress':
      return [
        what('tool progress'),
        `${ev.toolName ?? '?'}: ${ev.progress}${typeof ev.total === 'number' ? ` of ${ev.total}` : ''}${typeof ev.message === 'string' ? ` · ${ev.message}` : ''}`,
      ];
    case 'approval_requested':
      return [what('approval requested'), (ev.approvals ?? []).map((a) => `${a.toolName} (${a.id})`).join(', ')];
    case 'approval_resolved':
      return [what('approval'), `${ev.id} ${ev.approved ? 'approved' : 'denied'}${ev.reason ? `: ${ev.reason}` : ''}`];
    case 'stage_start':
      return [what('stage start'), String(ev.stage)];
    case 'stage_end':
      return [what('stage end'), String(ev.stage), ev.status ? ` · ${ev.status}` : ''];
    case 'interrupt':
      return [what('interrupt'), block(json(ev.interrupt))];
    case 'agent_start':
      return [what('agent'), `${ev.agentId} starts`];
    case 'agent_response':
      return [what('agent reply'), ev.agentId, block(ev.content ?? '', 'text')];
    default:
      return [what(String(ev.type)), block(json(ev))];
  }
}

/** What a version's `cause` says, in one line. */
export function causeText(cause) {
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

/** ` (MCP server crm: get_order)` for a call to an MCP tool; empty otherwise. */
function mcpText(ev) {
  const mcp = ev.mcp;
  return typeof mcp?.server === 'string' ? ` (MCP server ${mcp.server}: ${String(mcp.tool)})` : '';
}
