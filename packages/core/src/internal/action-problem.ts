import { describeValue } from '../signal.js';

/**
 * Describes why `value` is not a well-formed `Action`, or returns `undefined` when it is.
 * Used by validators (the router's route checks) to name the problem.
 */
export function actionProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return `expected an Action object, got ${describeValue(value)}`;
  const { type } = value as { type?: unknown };
  switch (type) {
    case 'continue':
    case 'graceful_stop':
    case 'force_stop':
      return undefined;
    case 'transition':
      return nonEmptyField(value, 'target');
    case 'custom':
      return nonEmptyField(value, 'name');
    case 'reject':
      return nonEmptyField(value, 'reason');
    default:
      return `unknown action type ${describeValue(type)}: expected one of "continue", "graceful_stop", "force_stop", "transition", "custom", "reject"`;
  }
}

function nonEmptyField(value: object, field: string): string | undefined {
  const v = (value as Record<string, unknown>)[field];
  return typeof v === 'string' && v !== ''
    ? undefined
    : `a ${(value as { type: string }).type} action needs a non-empty string "${field}", got ${describeValue(v)}`;
}
