/** A JSON value, as approval conditions compare them. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** What an approval rule decides for a tool call: run it, ask a person, or refuse it. */
export type ApprovalDecisionKind = 'allow' | 'ask' | 'deny';

/**
 * A test on one argument of a tool call, as JSON data; every test given must hold.
 *
 * `path` is a dot path into the arguments (`'amount'`, `'to.email'`, `'items.0.sku'`): non-empty
 * segments, an all-digit segment indexes an array. A condition on a missing path fails (unless
 * `exists: false`); a number test on a non-number fails; `equals` / `in` compare JSON values
 * structurally; the string tests apply to strings only (no regular expressions).
 */
export interface ArgCondition {
  readonly path: string;
  readonly equals?: JsonValue;
  readonly in?: readonly JsonValue[];
  readonly gt?: number;
  readonly gte?: number;
  readonly lt?: number;
  readonly lte?: number;
  readonly startsWith?: string;
  readonly endsWith?: string;
  readonly includes?: string;
  readonly exists?: boolean;
}

/** One rule of an {@link ApprovalPolicy}: for `tool` (an exact name or `*`), when every condition holds, `decision`. */
export interface ApprovalRule {
  readonly tool: string;
  readonly when?: readonly ArgCondition[];
  readonly decision: ApprovalDecisionKind;
  /** Shown to the approver and, for `deny`, to the model. */
  readonly reason?: string;
}

/**
 * Which tool calls run, which wait for a person, which are refused — as data (crew.yaml
 * `approvals:`). Rules are tried in order; the first whose tool matches and whose conditions all
 * hold decides. With no matching rule: `ask` if the tool's `needsApproval` says so, else
 * `default` (`allow` when absent).
 */
export interface ApprovalPolicy {
  readonly rules?: readonly ApprovalRule[];
  readonly default?: ApprovalDecisionKind;
}

/**
 * A tool call held for a person's decision. `id` is assigned by the executor (a model's call ids
 * repeat across replies): unique within the session for its whole life and stable across
 * save/load — the id an approval answers (and the AI SDK UI protocol's `approvalId`).
 */
export interface PendingApproval {
  readonly id: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly arguments: unknown;
  /** The crew agent whose call this is. */
  readonly agentId: string;
  readonly reason?: string;
  /** The index of the policy rule that asked, when a rule did. */
  readonly rule?: number;
  /** ISO-8601 time the approval was requested. */
  readonly requestedAt: string;
}

/** A person's decision on one {@link PendingApproval}, by its `id`. */
export interface ApprovalDecision {
  readonly id: string;
  readonly approved: boolean;
  /** Why; a denied call's tool message carries it to the model (`denied: <reason>`). */
  readonly reason?: string;
}
