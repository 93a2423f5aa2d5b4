import { RunnerError } from 'signalyard';

/**
 * A session-history failure the `sessions` commands report with the Runner's codes
 * (`SESSION_NOT_FOUND`, `SESSION_EXISTS`, `VERSION_UNAVAILABLE`): exit code 1, its message as one
 * line, like a `CliSessionError`.
 */
export function isHistoryError(error: unknown): error is RunnerError {
  return (
    RunnerError.isInstance(error) &&
    (error.code === 'SESSION_NOT_FOUND' || error.code === 'SESSION_EXISTS' || error.code === 'VERSION_UNAVAILABLE')
  );
}
