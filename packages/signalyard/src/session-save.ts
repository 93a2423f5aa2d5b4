import type { ChatMessage, PendingApproval } from '@signalyard/core';
import type { ApprovalAliases } from './approval-aliases.js';
import type { StaleApproval } from './live-session.js';
import type { TurnRecord } from './turn-record.js';

/**
 * The history and engine state a save writes (with the strategy's snapshot at that time), and the
 * approval fields when it changes them (absent: kept as loaded). @internal
 */
export interface SessionSave {
  readonly history: readonly ChatMessage[];
  readonly engineState: unknown;
  readonly pendingApprovals?: readonly PendingApproval[];
  readonly staleApprovals?: readonly StaleApproval[];
  /** The approval aliases the pending ones are read with (absent: as loaded). */
  readonly aliases?: ApprovalAliases;
  /** What the turn did, for the version's `cause.summary` (absent: nothing to record). */
  readonly record?: TurnRecord;
  /** The turn's visible reply, for `cause.summary.reply`. */
  readonly reply?: string;
}
