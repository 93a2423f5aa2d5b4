import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { describeValue } from './signal.js';
import { actionProblem } from './internal/action-problem.js';

/**
 * What an agent does with a signal, as decided by the router.
 *
 * - `continue`: run the agent's engine.
 * - `graceful_stop`: let the work in flight finish, then stop the session's current work.
 * - `force_stop`: abort the work in flight.
 * - `transition`: run `strategy.execute(target, signal.payload)`; for an FSM, `target` is an
 *   FSM **action** name (an event such as `'check'`), not a state name.
 * - `custom`: run the plugin handler registered for `name`.
 * - `reject`: refuse the signal; nothing runs and the session goes on.
 */
export type Action =
  | {
      /** `continue`: run the agent's engine. */
      readonly type: 'continue';
    }
  | {
      /** `graceful_stop`: let the current turn finish, stop what is queued. */
      readonly type: 'graceful_stop';
    }
  | {
      /** `force_stop`: abort the current turn and stop what is queued. */
      readonly type: 'force_stop';
    }
  | {
      /** `transition`: execute `target` on the session's strategy. */
      readonly type: 'transition';
      /** The strategy action to execute (for an FSM: an action name, not a state). */
      readonly target: string;
    }
  | {
      /** `custom`: call the handler a plugin claimed for `name`. */
      readonly type: 'custom';
      /** The custom action's name, as claimed with `handleCustomAction`. */
      readonly name: string;
    }
  | {
      /** `reject`: refuse the signal; nothing runs. */
      readonly type: 'reject';
      /** Why it was refused, for the outcome and the logs. */
      readonly reason: string;
    };

/** The `type` of an {@link Action}. */
export type ActionType = Action['type'];

function nonEmpty(what: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    throw new InvalidArgumentError({
      code: 'ACTION_INVALID',
      message: `Invalid ${what} ${field} ${describeValue(value)}: expected a non-empty string`,
    });
  }
  return value;
}

/**
 * The action constants and factories. Every action returned is frozen.
 *
 * @example
 * ```ts
 * const routes = [
 *   { kind: SignalKind.UserMessage, action: Action.Continue },
 *   { kind: SignalKind.Timer, action: Action.transition('check') },
 *   { kind: SignalKind.UserMessage, action: Action.reject('busy'), predicate: isBusy, priority: 10 },
 * ];
 * ```
 */
export const Action: {
  /** Run the agent's engine. */
  readonly Continue: Action;
  /** Let the work in flight finish, then stop the session's current work. */
  readonly GracefulStop: Action;
  /** Abort the work in flight. */
  readonly ForceStop: Action;
  /**
   * Execute the strategy action `target`. @throws InvalidArgumentError `ACTION_INVALID` on an empty target.
   */
  transition(target: string): Action;
  /** Run the custom action handler `name`. @throws InvalidArgumentError `ACTION_INVALID` on an empty name. */
  custom(name: string): Action;
  /** Refuse the signal with `reason`. @throws InvalidArgumentError `ACTION_INVALID` on an empty reason. */
  reject(reason: string): Action;
} = Object.freeze({
  Continue: Object.freeze({ type: 'continue' }),
  GracefulStop: Object.freeze({ type: 'graceful_stop' }),
  ForceStop: Object.freeze({ type: 'force_stop' }),
  transition: (target: string): Action =>
    Object.freeze({ type: 'transition', target: nonEmpty('transition', 'target', target) }),
  custom: (name: string): Action => Object.freeze({ type: 'custom', name: nonEmpty('custom action', 'name', name) }),
  reject: (reason: string): Action => Object.freeze({ type: 'reject', reason: nonEmpty('reject', 'reason', reason) }),
} as const);

/** True when `value` is a well-formed {@link Action}. */
export function isAction(value: unknown): value is Action {
  return actionProblem(value) === undefined;
}

/**
 * Renders an action for logs and transcripts: `continue`, `transition(check)`, `reject(busy)`;
 * `unrouted` for `undefined`.
 * @throws InvalidArgumentError `ACTION_INVALID` for anything else that is not an {@link Action}.
 */
export function formatAction(action: Action | undefined): string {
  if (action === undefined) return 'unrouted';
  const problem = actionProblem(action);
  if (problem !== undefined) {
    throw new InvalidArgumentError({ code: 'ACTION_INVALID', message: `formatAction: ${problem}` });
  }
  switch (action.type) {
    case 'transition':
      return `transition(${action.target})`;
    case 'custom':
      return `custom(${action.name})`;
    case 'reject':
      return `reject(${action.reason})`;
    default:
      return action.type;
  }
}
