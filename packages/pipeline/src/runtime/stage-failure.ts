import { errorCode } from '@signalyard/core/internal';
import { messageOf } from '../shared/error-message.js';

/** Why a stage failed: a message and, when the error had a string one, its code. @internal */
export interface Failure {
  readonly message: string;
  readonly code: string | undefined;
}

/** The failure a thrown (or rejected) value describes. @internal */
export function failureOf(error: unknown): Failure {
  return { message: messageOf(error), code: errorCode(error) };
}

/** The failure an output's truthy `error` field describes. @internal */
export function outputFailure(error: unknown): Failure {
  if (typeof error === 'string') return { message: error, code: undefined };
  if (error === true) return { message: 'the stage output has error: true', code: undefined };
  return failureOf(error);
}
