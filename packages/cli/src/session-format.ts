import type { ChatMessage, SessionCause } from '@signalyard/core';
import { terminalJson, terminalText, type Style } from './cli-io.js';

/**
 * Text for one table cell or line: whitespace runs (line breaks included) become one space, text
 * over `max` code units is cut with `…`, and what a terminal would act on (a stored message could
 * carry terminal escapes) is shown escaped ({@link terminalText}).
 */
export function oneLine(text: string, max: number): string {
  return terminalText(flatten(text, max));
}

/** `text` with whitespace runs as one space, cut with `…` past `max` code units (never inside a surrogate pair). */
function flatten(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let cut = max - 1;
  const last = flat.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return `${flat.slice(0, cut)}…`;
}

/** What made a version, in a few words: the signal (and its text), a fork's source, a rewind's target. */
export function causeText(cause: SessionCause | undefined): string {
  if (cause === undefined) return '-';
  const parts: string[] = [];
  if (cause.signal !== undefined) {
    const text = cause.signal.text === undefined ? '' : ` ${terminalJson(flatten(cause.signal.text, 40))}`;
    parts.push(`${cause.signal.kind}${text}`);
  }
  if (cause.approvals !== undefined && cause.approvals.length > 0) {
    const approved = cause.approvals.filter((a) => a.approved).length;
    parts.push(`${approved} approved, ${cause.approvals.length - approved} denied`);
  }
  if (cause.merged !== undefined && cause.merged > 0) parts.push(`+${cause.merged} merged`);
  if (cause.forkedFrom !== undefined) {
    parts.push(`forked from ${cause.forkedFrom.sessionKey}@${cause.forkedFrom.version}`);
  }
  if (cause.rewoundTo !== undefined) parts.push(`rewound to ${cause.rewoundTo}`);
  return parts.length === 0 ? '-' : oneLine(parts.join(', '), 120);
}

/** `tier/routeName`, either alone, or `-`. */
export function routeText(cause: SessionCause | undefined): string {
  const tier = cause?.tier === undefined ? undefined : terminalText(cause.tier);
  const name = cause?.routeName === undefined ? undefined : oneLine(cause.routeName, 40);
  if (tier !== undefined && name !== undefined) return `${tier}/${name}`;
  return tier ?? name ?? '-';
}

/**
 * A plain-text table: a header row (bold on a terminal), columns padded to their widest cell,
 * two spaces apart, numeric columns (`right`) aligned right. The last column is not padded.
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  style: Style,
  right: ReadonlySet<number> = new Set(),
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => {
        if (i === cells.length - 1 && !right.has(i)) return cell;
        return right.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0);
      })
      .join('  ')
      .trimEnd();
  return [style.bold(line(header)), ...rows.map(line)].map((l) => `${l}\n`).join('');
}

/** A chat message as one line: `user: hello`, `assistant (tutor): …`, `tool (call_1): …`. */
export function messageLine(m: ChatMessage): string {
  const who =
    m.role === 'tool' && m.toolCallId !== undefined
      ? `tool (${m.toolCallId})`
      : m.name === undefined
        ? m.role
        : `${m.role} (${m.name})`;
  const calls =
    m.toolCalls !== undefined && m.toolCalls.length > 0 ? ` [calls ${m.toolCalls.map((c) => c.name).join(', ')}]` : '';
  return oneLine(`${who}: ${m.content}${calls}`, 160);
}
