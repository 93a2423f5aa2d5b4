import type { Action } from './action.js';
import type { JsonValue, PendingApproval } from './approval.js';
import { InboxError } from './errors/inbox-error.js';
import { SignalyardError } from './errors/signalyard-error.js';
import { errorText } from './internal/error-text.js';
import { toJsonValue, utf8Length } from './internal/json-safe.js';
import { isRecord } from './internal/values.js';
import type { Tier } from './route.js';
import type { Outcome, OutcomeStatus } from './outcome.js';
import { describeValue, type SignalKind } from './signal.js';

/** How many bytes of JSON an outcome's `output` may take before {@link outcomeToJson} replaces it with `{ truncated: true, bytes }`: 256 KiB. */
export const DEFAULT_MAX_OUTCOME_BYTES = 256 * 1024;

/**
 * A `SignalyardError` as JSON, as it crosses processes inside an {@link OutcomeJson}:
 * its code and message, its structured fields (the error's own properties, as JSON), and the
 * name and message of its cause.
 */
export interface SignalyardErrorJson {
  /** The error's stable code. */
  readonly code: string;
  /** The error's message. */
  readonly message: string;
  /** The error's structured fields (`key`, `expected`, `retryAfterMs`, `problems`, …), as JSON. */
  readonly fields: Readonly<Record<string, JsonValue>>;
  /** The error's cause, when it had one: its name and message. */
  readonly cause?: {
    /** The cause's name (`TypeError`, `AbortedError`, …). */
    readonly name: string;
    /** The cause's message. */
    readonly message: string;
  };
}

/** An output too big to carry: what {@link outcomeToJson} keeps of it. */
export interface TruncatedOutput {
  /** Always `true`. */
  readonly truncated: true;
  /** How many bytes its JSON took. */
  readonly bytes: number;
}

/**
 * An `Outcome` as JSON, as it crosses processes (a worker settles an entry; a producer in
 * another process awaits its outcome). Made by {@link outcomeToJson}, read back by
 * {@link outcomeFromJson}: the route keeps its kind, action, priority and name (not its
 * predicate), the error keeps its code, message and fields, the output is JSON (or
 * `{ truncated: true, bytes }` above `maxOutcomeBytes`).
 */
export interface OutcomeJson {
  /** The session the signal was applied to. */
  readonly sessionKey: string;
  /** The agent of that session. */
  readonly agentId: string;
  /** The action applied; absent when unrouted. */
  readonly action?: Action;
  /** The route that decided; absent when unrouted or a runner default applied. */
  readonly decidedBy?: {
    /** The tier of the deciding route. */
    readonly tier: Tier;
    /** The route that decided, without its predicate. */
    readonly route: {
      /** The signal kind it matches. */
      readonly kind: SignalKind;
      /** The action it decides. */
      readonly action: Action;
      /** Its priority, when it has one. */
      readonly priority?: number;
      /** Its name, when it has one. */
      readonly name?: string;
    };
  };
  /** How the signal ended. */
  readonly status: OutcomeStatus;
  /** What the action produced, as JSON; `{ truncated: true, bytes }` when its JSON was over `maxOutcomeBytes`. */
  readonly output?: JsonValue;
  /** With status `failed` (and a refused transition's `rejected`): what went wrong. */
  readonly error?: SignalyardErrorJson;
  /** With status `paused`: the tool calls now waiting for a person's decision. */
  readonly pendingApprovals?: readonly PendingApproval[];
  /** A `collect` agent: how many user messages this engine run answered. */
  readonly mergedWith?: number;
}

const STATUSES: ReadonlySet<string> = new Set(['completed', 'stopped', 'rejected', 'unrouted', 'paused', 'failed']);
const TIERS: ReadonlySet<string> = new Set(['strategy', 'agent', 'plugin']);
/** Properties every error has that are not its fields. */
const NOT_FIELDS: ReadonlySet<string> = new Set(['name', 'message', 'stack', 'code', 'cause']);

function invalid(what: string, value: unknown, expected: string): InboxError {
  return new InboxError({
    code: 'INBOX_INPUT_INVALID',
    message: `Invalid ${what} ${describeValue(value)}: expected ${expected}`,
  });
}

/**
 * An `Outcome` as {@link OutcomeJson}: the route without its predicate, the error as
 * {@link SignalyardErrorJson}, the output as JSON (following `JSON.stringify`, with `bigint`s as
 * strings, errors as `{ name, message }` and cycles as `"[cycle]"`) — or, when that JSON is over
 * `maxOutcomeBytes` (default 256 KiB) in UTF-8, `{ truncated: true, bytes }`. Total for any
 * outcome a Runner produces.
 * @throws InboxError `INBOX_INPUT_INVALID` when `outcome` is not an outcome (no string
 * `sessionKey`/`agentId`, an unknown `status`) or `maxOutcomeBytes` is not an integer ≥ 0.
 * @example
 * ```ts
 * const json = outcomeToJson(outcome, { maxOutcomeBytes: 64 * 1024 });
 * await inbox.putOutcome(receiptId, json, 600_000);
 * ```
 */
export function outcomeToJson(outcome: Outcome, opts: { maxOutcomeBytes?: number } = {}): OutcomeJson {
  if (!isRecord(outcome) || typeof outcome.sessionKey !== 'string' || typeof outcome.agentId !== 'string') {
    throw invalid('outcome', outcome, 'an Outcome { sessionKey, agentId, action, decidedBy, status, … }');
  }
  if (!STATUSES.has(outcome.status)) {
    throw invalid('outcome status', outcome.status, `one of ${[...STATUSES].join(', ')}`);
  }
  const max = isRecord(opts) ? (opts.maxOutcomeBytes ?? DEFAULT_MAX_OUTCOME_BYTES) : opts;
  if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 0) {
    throw invalid('maxOutcomeBytes', max, 'an integer number of bytes >= 0');
  }
  const { decidedBy } = outcome;
  return {
    sessionKey: outcome.sessionKey,
    agentId: outcome.agentId,
    ...(outcome.action !== undefined && { action: toJsonValue(outcome.action) as unknown as Action }),
    ...(decidedBy !== undefined && {
      decidedBy: {
        tier: decidedBy.tier,
        route: {
          kind: decidedBy.route.kind,
          action: toJsonValue(decidedBy.route.action) as unknown as Action,
          ...(decidedBy.route.priority !== undefined && { priority: decidedBy.route.priority }),
          ...(decidedBy.route.name !== undefined && { name: decidedBy.route.name }),
        },
      },
    }),
    status: outcome.status,
    ...outputJson(outcome.output, max),
    ...(outcome.error !== undefined && { error: signalyardErrorToJson(outcome.error) }),
    ...(outcome.pendingApprovals !== undefined && {
      pendingApprovals: toJsonValue(outcome.pendingApprovals) as unknown as readonly PendingApproval[],
    }),
    ...(outcome.mergedWith !== undefined && { mergedWith: outcome.mergedWith }),
  };
}

function outputJson(output: unknown, max: number): { output?: JsonValue } {
  if (output === undefined) return {};
  const json = toJsonValue(output);
  if (json === undefined) return {};
  const bytes = utf8Length(JSON.stringify(json));
  return bytes > max ? { output: { truncated: true, bytes } } : { output: json };
}

/**
 * An error as {@link SignalyardErrorJson}: its `code` (`UNKNOWN_ERROR` for an error without a
 * string one), its message, its own enumerable properties other than `name`, `message`, `stack`,
 * `code` and `cause` as `fields` (as JSON), and its cause's name and message. Total: never throws.
 * @example
 * ```ts
 * signalyardErrorToJson(new CheckpointConflictError({ key: 'k', expected: 1, actual: 2 }));
 * // { code: 'CHECKPOINT_CONFLICT', message: 'Checkpoint "k" is at version 2, …', fields: { key: 'k', expected: 1, actual: 2 } }
 * ```
 */
export function signalyardErrorToJson(error: unknown): SignalyardErrorJson {
  const code = readString(error, 'code');
  const fields: Record<string, JsonValue> = {};
  if (typeof error === 'object' && error !== null) {
    try {
      for (const key of Object.keys(error)) {
        if (NOT_FIELDS.has(key)) continue;
        const value = toJsonValue((error as Record<string, unknown>)[key]);
        if (value !== undefined) fields[key] = value;
      }
    } catch {
      // a hostile Proxy: no fields
    }
  }
  const cause = typeof error === 'object' && error !== null ? readCause(error) : undefined;
  return {
    code: code === undefined || code === '' ? 'UNKNOWN_ERROR' : code,
    message: errorText(error),
    fields,
    ...(cause !== undefined && { cause }),
  };
}

function readString(value: unknown, key: string): string | undefined {
  try {
    const field: unknown =
      typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    return typeof field === 'string' ? field : undefined;
  } catch {
    return undefined;
  }
}

function readCause(error: object): { name: string; message: string } | undefined {
  let cause: unknown;
  try {
    cause = (error as { cause?: unknown }).cause;
  } catch {
    return undefined;
  }
  if (cause === undefined) return undefined;
  return { name: readString(cause, 'name') ?? typeof cause, message: errorText(cause) };
}

/**
 * A {@link SignalyardErrorJson} rebuilt as an error: a `SignalyardError` (it passes
 * `isSignalyardError`) with the same `code` and `message`, each field as an own property, and —
 * when the JSON has a cause — an `Error` with the cause's name and message as its `cause`. The
 * original subclass is not rebuilt (it may live in a package this process does not load): tell
 * errors apart by `code`.
 * @throws InboxError `INBOX_INPUT_INVALID` when `json` is not `{ code, message, fields?, cause? }`
 * with a non-empty string code.
 * @example
 * ```ts
 * const error = signalyardErrorFromJson(outcomeJson.error);
 * if (isSignalyardError(error, 'CHECKPOINT_CONFLICT')) console.log(error.message);
 * ```
 */
export function signalyardErrorFromJson(json: SignalyardErrorJson): SignalyardError {
  if (!isRecord(json) || typeof json.code !== 'string' || json.code === '' || typeof json.message !== 'string') {
    throw invalid('error JSON', json, '{ code: non-empty string, message: string, fields?, cause? }');
  }
  const given: unknown = json.fields;
  const fields = given ?? {};
  if (!isRecord(fields)) throw invalid('error JSON fields', fields, 'an object');
  const cause: unknown = json.cause;
  if (
    cause !== undefined &&
    (!isRecord(cause) || typeof cause.name !== 'string' || typeof cause.message !== 'string')
  ) {
    throw invalid('error JSON cause', cause, '{ name: string, message: string }');
  }
  let rebuiltCause: Error | undefined;
  if (cause !== undefined) {
    rebuiltCause = new Error(cause.message as string);
    rebuiltCause.name = cause.name as string;
  }
  const error = new SignalyardError({
    code: json.code,
    message: json.message,
    ...(rebuiltCause !== undefined && { cause: rebuiltCause }),
  });
  for (const key of Object.keys(fields)) {
    if (NOT_FIELDS.has(key)) continue;
    // defineProperty: a "__proto__" field (JSON.parse makes it an own key) stays a plain field
    Object.defineProperty(error, key, { value: fields[key], enumerable: true, writable: true, configurable: true });
  }
  return error;
}

/**
 * An {@link OutcomeJson} rebuilt as an `Outcome` (what a producer in another process than the
 * settling worker resolves with): the same fields, `decidedBy.route` without a predicate, the
 * error rebuilt with {@link signalyardErrorFromJson}.
 * @throws InboxError `INBOX_INPUT_INVALID` when `json` is not an outcome JSON (no string
 * `sessionKey`/`agentId`, an unknown `status`, a malformed `decidedBy` or `error`).
 */
export function outcomeFromJson(json: OutcomeJson): Outcome {
  if (!isRecord(json) || typeof json.sessionKey !== 'string' || typeof json.agentId !== 'string') {
    throw invalid('outcome JSON', json, '{ sessionKey, agentId, status, … } as outcomeToJson makes it');
  }
  if (!STATUSES.has(json.status))
    throw invalid('outcome JSON status', json.status, `one of ${[...STATUSES].join(', ')}`);
  const decidedBy: unknown = json.decidedBy;
  if (
    decidedBy !== undefined &&
    (!isRecord(decidedBy) || !TIERS.has(decidedBy.tier as string) || !isRecord(decidedBy.route))
  ) {
    throw invalid('outcome JSON decidedBy', decidedBy, '{ tier, route: { kind, action, priority?, name? } }');
  }
  return {
    sessionKey: json.sessionKey,
    agentId: json.agentId,
    action: json.action,
    decidedBy: json.decidedBy,
    status: json.status,
    ...(json.output !== undefined && { output: json.output }),
    ...(json.error !== undefined && { error: signalyardErrorFromJson(json.error) }),
    ...(json.pendingApprovals !== undefined && { pendingApprovals: json.pendingApprovals }),
    ...(json.mergedWith !== undefined && { mergedWith: json.mergedWith }),
  };
}
