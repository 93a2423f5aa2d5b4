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
  /** A dot path into the arguments (`amount`, `to.email`, `items.0.sku`). */
  readonly path: string;
  /** The value equals this JSON value (structurally). */
  readonly equals?: JsonValue;
  /** The value equals one of these JSON values. */
  readonly in?: readonly JsonValue[];
  /** A number greater than this. */
  readonly gt?: number;
  /** A number greater than or equal to this. */
  readonly gte?: number;
  /** A number less than this. */
  readonly lt?: number;
  /** A number less than or equal to this. */
  readonly lte?: number;
  /** A string starting with this. */
  readonly startsWith?: string;
  /** A string ending with this. */
  readonly endsWith?: string;
  /** A string containing this. */
  readonly includes?: string;
  /** `true`: the path must exist; `false`: it must not. */
  readonly exists?: boolean;
}

/** One rule of an {@link ApprovalPolicy}: for `tool` (an exact name or `*`), when every condition holds, `decision`. */
export interface ApprovalRule {
  /**
   * A name for the rule (1 to 100 characters), e.g. `refunds-under-100`: recorded with every
   * decision the rule makes (`ApprovalVerdict.ruleName`, `PendingApproval.ruleName`, a version's
   * `cause.summary.approvals`) and shown by the inspector ("allowed by rule refunds-under-100").
   */
  readonly name?: string;
  /** The tool name this rule applies to. */
  readonly tool: string;
  /** Conditions on the call's arguments, all of which must hold (none: every call of the tool). */
  readonly when?: readonly ArgCondition[];
  /** What the rule decides when it matches. */
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
  /** Tried in order; the first that matches decides. */
  readonly rules?: readonly ApprovalRule[];
  /** The decision when no rule matches (and the tool does not ask by itself). Default `allow`. */
  readonly default?: ApprovalDecisionKind;
}

/**
 * A tool call held for a person's decision. `id` is assigned by the executor (a model's call ids
 * repeat across replies): unique within the session for its whole life and stable across
 * save/load — the id an approval answers (and the AI SDK UI protocol's `approvalId`).
 */
export interface PendingApproval {
  /** The approval id, unique within the session; the id an {@link ApprovalDecision} answers. */
  readonly id: string;
  /** The model's id for the tool call. */
  readonly toolCallId: string;
  /** The tool the model asked to call. */
  readonly toolName: string;
  /** The arguments the model gave. */
  readonly arguments: unknown;
  /** The crew agent whose call this is. */
  readonly agentId: string;
  /** Why it is held: the matching rule's `reason`, when it has one. */
  readonly reason?: string;
  /** The index of the policy rule that asked, when a rule did. */
  readonly rule?: number;
  /** The `name` of the policy rule that asked, when a named rule did. */
  readonly ruleName?: string;
  /** ISO-8601 time the approval was requested. */
  readonly requestedAt: string;
  /**
   * The call's `ToolContext.idempotencyKey` (`<receiptId>:tool:<n>` of the turn that asked for
   * it): the call keeps it when it runs after the decision, in a later turn. Absent when the run
   * that held the call had no key (a crew run outside a Runner, without `idempotencyKey`).
   */
  readonly idempotencyKey?: string;
}

/** A person's decision on one {@link PendingApproval}, by its `id`. */
export interface ApprovalDecision {
  /** The {@link PendingApproval.id} this decision answers. */
  readonly id: string;
  /** `true` runs the call; `false` answers the model that it was denied. */
  readonly approved: boolean;
  /** Why; a denied call's tool message carries it to the model (`denied: <reason>`). */
  readonly reason?: string;
}
