import { Action, type ApprovalDecision, type PendingApproval, type Signal } from '@signalyard/core';
import type { OutcomeParts } from './outcome-parts.js';

/**
 * The Runner's own check of a `tool_approval` signal's decisions against the session's pending
 * approvals (decisions-wave3 §2): decisions naming no pending id are refused
 * (`no_pending_approval`) before anything runs; in a mix, the pending ones are applied and the
 * others listed in `outcome.output.unknownApprovalIds`. Engines keep their own checks.
 */

const NONE: readonly never[] = Object.freeze([]);

/** The runner's refusal of decisions that name no pending approval. @internal */
export const NO_PENDING_APPROVAL = Action.reject('no_pending_approval');

/** A signal's decisions split by whether the session has them pending. @internal */
export interface DecisionCheck {
  /** The decisions naming a pending approval, in the signal's order: what the engine applies. */
  readonly pending: readonly ApprovalDecision[];
  /** The ids of the other decisions (unknown, forged, decided already, retired), in order. */
  readonly unknownIds: readonly string[];
}

/** No decisions to check (a signal that is not a `tool_approval`). */
const NO_DECISIONS: DecisionCheck = Object.freeze({ pending: NONE, unknownIds: NONE });

/** The decisions a `tool_approval` signal carries (none for other signals or a malformed payload). @internal */
export function decisionsOf(signal: Signal): readonly ApprovalDecision[] {
  if (signal.kind !== 'tool_approval') return NONE;
  const payload = signal.payload as { decisions?: unknown } | null;
  const decisions = typeof payload === 'object' && payload !== null ? payload.decisions : undefined;
  return Array.isArray(decisions) ? (decisions as ApprovalDecision[]) : NONE;
}

/**
 * Splits `signal`'s decisions (public ids) into those naming an approval in `pending` (the
 * checkpoint's `pendingApprovals`) and the ids of the rest. @internal
 */
export function checkDecisions(signal: Signal, pending: readonly PendingApproval[]): DecisionCheck {
  const decisions = decisionsOf(signal);
  if (decisions.length === 0) return NO_DECISIONS;
  const open = new Set(pending.map((p) => p.id));
  let unknownIds: string[] | undefined;
  for (const d of decisions) if (!open.has(d.id)) (unknownIds ??= []).push(d.id);
  if (unknownIds === undefined) return { pending: decisions, unknownIds: NONE };
  return { pending: decisions.filter((d) => open.has(d.id)), unknownIds };
}

/** True when `signal` is a `tool_approval` none of whose decisions names a pending approval. @internal */
export function decidesNothingPending(signal: Signal, pending: readonly PendingApproval[]): boolean {
  if (signal.kind !== 'tool_approval') return false;
  return checkDecisions(signal, pending).pending.length === 0;
}

/**
 * `parts` with `unknownIds` listed as `output.unknownApprovalIds`: added to a plain-object
 * output (a copy), the whole output when there is none, else `{ output, unknownApprovalIds }`.
 * `parts` itself when there are none. @internal
 */
export function withUnknownIds(parts: OutcomeParts, unknownIds: readonly string[]): OutcomeParts {
  if (unknownIds.length === 0) return parts;
  const ids = [...unknownIds];
  const output: unknown = parts.output;
  if (output === undefined) return { ...parts, output: { unknownApprovalIds: ids } };
  if (isPlainObject(output)) return { ...parts, output: { ...output, unknownApprovalIds: ids } };
  return { ...parts, output: { output, unknownApprovalIds: ids } };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
