import { describeValue, type ApprovalDecision, type PendingApproval, type Signal } from '@signalyard/core';
import { decisionsOf } from './approval-checks.js';
import type { StaleApproval } from './live-session.js';

/**
 * The payload of a `tool_approval` signal, as `Runner.approve` dispatches it (and `dispatch`
 * checks it). Routes read it, e.g. to refuse an approver:
 *
 * @example
 * ```ts
 * const reviewersOnly: SignalRoute = {
 *   kind: SignalKind.ToolApproval,
 *   predicate: (s) => !reviewers.has((s.payload as ToolApprovalPayload).by ?? ''),
 *   action: Action.reject('not a reviewer'),
 * };
 * ```
 */
export interface ToolApprovalPayload {
  /** The decisions, one per approval id. */
  readonly decisions: readonly ApprovalDecision[];
  /** Who decided (a user id, an email): routes may check it; the audit log and the version's cause record it. */
  readonly by?: string;
}

/** The longest decision `reason` accepted, in UTF-16 code units (decisions-wave3 §13). */
const MAX_DECISION_REASON = 1000;
/** The longest approver (`by`) accepted, in UTF-16 code units (decisions-wave3 §13). */
const MAX_APPROVER = 200;

/** Why `value` (a string) is too long for the field `field`; `undefined` when it is short enough. */
function tooLong(field: string, value: string, limit: number): string | undefined {
  if (value.length <= limit) return undefined;
  return `${field} ${value.length} code units long, expected at most ${limit}`;
}

/** Why the approver `by` (already known to be a string or nothing) is too long; `undefined` when it is not. @internal */
export function approverProblem(by: unknown): string | undefined {
  return typeof by === 'string' ? tooLong('by', by, MAX_APPROVER) : undefined;
}

/**
 * Why `payload` is not a `tool_approval` payload `{ decisions: ApprovalDecision[]; by?: string }`
 * (at least one decision, each `{ id, approved, reason? }` with a distinct non-empty id), naming
 * the bad value; `undefined` when it is one. @internal
 */
export function toolApprovalPayloadProblem(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return `payload ${describeValue(payload)}, expected { decisions: ApprovalDecision[], by?: string }`;
  const { decisions, by } = payload as { decisions?: unknown; by?: unknown };
  if (by !== undefined && (typeof by !== 'string' || by === ''))
    return `by ${describeValue(by)}, expected a non-empty string (who decided) or nothing`;
  return approverProblem(by) ?? decisionsProblem(decisions);
}

/**
 * Why `decisions` is not a non-empty list of `{ id, approved, reason? }` with distinct ids and
 * each `reason` at most {@link MAX_DECISION_REASON} code units. @internal
 */
export function decisionsProblem(decisions: unknown): string | undefined {
  if (!Array.isArray(decisions) || decisions.length === 0)
    return `decisions ${describeValue(decisions)}, expected a non-empty list of { id: string, approved: boolean, reason?: string }`;
  const seen = new Set<string>();
  for (let i = 0; i < decisions.length; i++) {
    const d: unknown = decisions[i];
    if (typeof d !== 'object' || d === null || Array.isArray(d))
      return `decisions[${i}] ${describeValue(d)}, expected { id: string, approved: boolean, reason?: string }`;
    const { id, approved, reason } = d as { id?: unknown; approved?: unknown; reason?: unknown };
    if (typeof id !== 'string' || id === '')
      return `decisions[${i}].id ${describeValue(id)}, expected a non-empty approval id`;
    if (typeof approved !== 'boolean') return `decisions[${i}].approved ${describeValue(approved)}, expected a boolean`;
    if (reason !== undefined && typeof reason !== 'string')
      return `decisions[${i}].reason ${describeValue(reason)}, expected a string or nothing`;
    const long = reason === undefined ? undefined : tooLong(`decisions[${i}].reason`, reason, MAX_DECISION_REASON);
    if (long !== undefined) return long;
    if (seen.has(id))
      return `decisions[${i}].id ${JSON.stringify(id)} decided twice, expected one decision per approval`;
    seen.add(id);
  }
  return undefined;
}

/** Who decided, for a `tool_approval` signal with a `by`. */
function approverOf(signal: Signal): string | undefined {
  if (signal.kind !== 'tool_approval') return undefined;
  const by = (signal.payload as { by?: unknown } | null)?.by;
  return typeof by === 'string' ? by : undefined;
}

/** A `tool_approval` signal's decisions as the audit log and a version's cause record them. @internal */
export function decisionRecords(signal: Signal): { id: string; approved: boolean; by?: string }[] | undefined {
  const decisions = decisionsOf(signal);
  if (decisions.length === 0) return undefined;
  const by = approverOf(signal);
  return decisions.map((d) =>
    by === undefined ? { id: d.id, approved: d.approved } : { id: d.id, approved: d.approved, by },
  );
}

/**
 * What a turn's engine receives as `ctx.approvals`: denials for stale approvals, then the
 * signal's `decisions` that name a pending approval (see `checkDecisions`). @internal
 */
export function turnApprovals(
  decisions: readonly ApprovalDecision[],
  stale: readonly StaleApproval[],
): readonly ApprovalDecision[] {
  if (stale.length === 0) return decisions;
  return [...stale.map((s): ApprovalDecision => ({ id: s.id, approved: false, reason: s.reason })), ...decisions];
}

/** Why `value` is not a list of `PendingApproval`s with distinct non-empty ids; `undefined` when it is. @internal */
export function pendingApprovalsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return `pendingApprovals ${describeValue(value)}, expected a list of PendingApproval`;
  const seen = new Set<string>();
  for (const p of value as unknown[]) {
    const a = p as Partial<Record<keyof PendingApproval, unknown>> | null;
    const expected = 'expected { id, toolCallId, toolName, arguments, agentId, requestedAt }';
    if (typeof a !== 'object' || a === null || Array.isArray(a))
      return `a pending approval ${describeValue(p)}, ${expected}`;
    if (typeof a.id !== 'string' || a.id === '')
      return `a pending approval with id ${describeValue(a.id)}, expected a non-empty string`;
    for (const field of ['toolCallId', 'toolName', 'agentId', 'requestedAt'] as const)
      if (typeof a[field] !== 'string')
        return `pending approval ${JSON.stringify(a.id)} with ${field} ${describeValue(a[field])}, expected a string`;
    if (seen.has(a.id)) return `pending approval id ${JSON.stringify(a.id)} twice, expected distinct ids`;
    seen.add(a.id);
  }
  return undefined;
}

/** Approval ids an engine announced during a turn with its own `approval_requested` / `approval_resolved` events. @internal */
export class AnnouncedApprovals {
  readonly requested = new Set<string>();
  readonly resolved = new Set<string>();

  /** Records the ids an engine event announces (other events are ignored). */
  note(event: { type: string } & Record<string, unknown>): void {
    if (event.type === 'approval_requested' && Array.isArray(event.approvals)) {
      for (const a of event.approvals as unknown[]) {
        const id = (a as { id?: unknown } | null)?.id;
        if (typeof id === 'string') this.requested.add(id);
      }
    } else if (event.type === 'approval_resolved' && typeof event.id === 'string') {
      this.resolved.add(event.id);
    }
  }
}

/** What a turn changed about approvals, to announce what its engine did not. @internal */
export interface ApprovalChange {
  /** Pending when the turn started. */
  readonly before: readonly PendingApproval[];
  /** Stale when the turn started (answered as denied this turn). */
  readonly stale: readonly StaleApproval[];
  /** Pending when it ended. */
  readonly after: readonly PendingApproval[];
  /** The decisions the turn applied (`ctx.approvals`). */
  readonly decisions: readonly ApprovalDecision[];
}

/**
 * The `approval_requested` / `approval_resolved` engine events a turn implies and its engine did
 * not emit itself: a request for each approval newly pending (one event per crew agent, in
 * order), a resolution for each decided approval no longer pending. @internal
 */
export function impliedApprovalEvents(
  change: ApprovalChange,
  announced: AnnouncedApprovals,
): ({ type: string } & Record<string, unknown>)[] {
  const events: ({ type: string } & Record<string, unknown>)[] = [];
  const before = new Map(change.before.map((p) => [p.id, p]));
  const after = new Set(change.after.map((p) => p.id));
  const stale = new Set(change.stale.map((s) => s.id));
  for (const d of change.decisions) {
    if (after.has(d.id) || announced.resolved.has(d.id)) continue;
    const was = before.get(d.id);
    if (was === undefined && !stale.has(d.id)) continue;
    events.push({
      type: 'approval_resolved',
      ...(was !== undefined && { agentId: was.agentId, toolCallId: was.toolCallId }),
      id: d.id,
      approved: d.approved,
      ...(d.reason !== undefined && { reason: d.reason }),
    });
  }
  const fresh = change.after.filter((p) => !before.has(p.id) && !announced.requested.has(p.id));
  const byAgent = new Map<string, PendingApproval[]>();
  for (const p of fresh) {
    const list = byAgent.get(p.agentId);
    if (list === undefined) byAgent.set(p.agentId, [p]);
    else list.push(p);
  }
  for (const [agentId, approvals] of byAgent) events.push({ type: 'approval_requested', agentId, approvals });
  return events;
}
