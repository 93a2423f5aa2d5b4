import { expect } from 'vitest';
import { ConfigError, SessionKeyError, type ConfigProblem } from '@signalyard/sessions';
import { thrown } from '@signalyard/test-utils';
export { thrown, rejection } from '@signalyard/test-utils';

/** The SessionKeyError `fn` throws (asserting its class and code). */
export function keyError(fn: () => unknown): SessionKeyError {
  const error = thrown(fn);
  if (!SessionKeyError.isInstance(error)) return expect.unreachable(`expected a SessionKeyError, got ${String(error)}`);
  expect(error.code).toBe('SESSION_KEY_INVALID');
  return error;
}

/** The problems of the ConfigError `fn` throws (asserting its class and code). */
export function configProblems(fn: () => unknown): readonly ConfigProblem[] {
  const error = thrown(fn);
  if (!ConfigError.isInstance(error)) return expect.unreachable(`expected a ConfigError, got ${String(error)}`);
  expect(error.code).toBe('CONFIG_INVALID');
  expect(error.problems.length).toBeGreaterThan(0);
  return error.problems;
}

/** The one problem at `path` (failing when there is none or several). */
export function problemAt(problems: readonly ConfigProblem[], path: string): ConfigProblem {
  const found = problems.filter((p) => p.path === path);
  expect(found, `problems at ${path} among ${JSON.stringify(problems, null, 2)}`).toHaveLength(1);
  return found[0]!;
}
