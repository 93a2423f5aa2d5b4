import { InvalidArgumentError } from './errors/invalid-argument-error.js';

/**
 * The category of a {@link Signal}: one of the four built-in kinds, or an application-defined
 * `custom:<name>` kind. A custom kind never equals a built-in one: `custom:stop` is not `stop`.
 */
export type SignalKind = 'user_message' | 'tool_result' | 'tool_approval' | 'stop' | 'timer' | `custom:${string}`;

const BUILT_IN_KINDS: ReadonlySet<string> = new Set(['user_message', 'tool_result', 'tool_approval', 'stop', 'timer']);

/**
 * The built-in signal kinds, and {@link SignalKind.custom} to make application-defined ones.
 *
 * @example
 * ```ts
 * const webhook = SignalKind.custom('webhook');   // 'custom:webhook'
 * router.route(signal(SignalKind.UserMessage, 'hello'));
 * ```
 */
export const SignalKind: {
  /** A message from a user. */
  readonly UserMessage: 'user_message';
  /** The result of a tool call. */
  readonly ToolResult: 'tool_result';
  /** Decisions on pending tool approvals: payload `{ decisions: ApprovalDecision[]; by?: string }` (`Runner.approve`). */
  readonly ToolApproval: 'tool_approval';
  /** A request to stop the session's current work. */
  readonly Stop: 'stop';
  /** A timer fired. */
  readonly Timer: 'timer';
  /**
   * An application-defined kind, `custom:<name>`.
   * @throws InvalidArgumentError `SIGNAL_KIND_INVALID` when `name` is empty, blank or not a string.
   */
  custom(name: string): `custom:${string}`;
} = Object.freeze({
  UserMessage: 'user_message',
  ToolResult: 'tool_result',
  ToolApproval: 'tool_approval',
  Stop: 'stop',
  Timer: 'timer',
  custom(name: string): `custom:${string}` {
    if (typeof name !== 'string' || name.trim() === '') {
      throw new InvalidArgumentError({
        code: 'SIGNAL_KIND_INVALID',
        message: `Invalid custom signal kind name ${describeValue(name)}: expected a non-empty string`,
      });
    }
    return `custom:${name}`;
  },
} as const);

/** True when `value` is a valid {@link SignalKind}: a built-in kind or `custom:` followed by a non-blank name. */
export function isSignalKind(value: unknown): value is SignalKind {
  if (typeof value !== 'string') return false;
  if (BUILT_IN_KINDS.has(value)) return true;
  return value.startsWith('custom:') && value.slice(7).trim() !== '';
}

/**
 * Something an agent receives: a user message, a tool result, a stop request, a timer, or a
 * custom event. The router decides what the agent does with it.
 */
export interface Signal<P = unknown> {
  /** What kind of signal this is: a built-in kind (`user_message`, `stop`, …) or `custom:<name>`. */
  readonly kind: SignalKind;
  /** The data the signal carries (`null` when none): for a `user_message` made by a Runner, the `InboundMessage`. */
  readonly payload: P;
}

/**
 * Creates a frozen {@link Signal}. The payload defaults to `null`.
 *
 * @throws InvalidArgumentError `SIGNAL_KIND_INVALID` when `kind` is not a {@link SignalKind}.
 * @example
 * ```ts
 * const s = signal(SignalKind.UserMessage, { text: 'hello' });
 * ```
 */
export function signal<P = null>(kind: SignalKind, payload?: P): Signal<P> {
  if (!isSignalKind(kind)) {
    throw new InvalidArgumentError({
      code: 'SIGNAL_KIND_INVALID',
      message: `Invalid signal kind ${describeValue(kind)}: expected "user_message", "tool_result", "tool_approval", "stop", "timer" or "custom:<name>"`,
    });
  }
  return Object.freeze({ kind, payload: (payload === undefined ? null : payload) as P });
}

/** `JSON.stringify` as it really behaves: `undefined` for values with no JSON form. */
const toJson = JSON.stringify as (value: unknown) => string | undefined;

/**
 * Renders any value briefly for an error message: strings quoted, objects as (truncated) JSON,
 * functions and symbols by kind. Never throws.
 */
export function describeValue(value: unknown): string {
  try {
    if (typeof value === 'string') return JSON.stringify(value);
    if (typeof value === 'bigint') return `${value}n`;
    if (typeof value === 'function') return 'a function';
    if (typeof value === 'symbol') return value.toString();
    if (value === null || typeof value !== 'object') return String(value);
    const kind = Array.isArray(value) ? 'an array' : 'an object';
    let json: string | undefined;
    try {
      json = toJson(value);
    } catch {
      return kind; // cycles, BigInts, throwing getters
    }
    if (json === undefined) return kind;
    return json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    return 'an unprintable value';
  }
}
