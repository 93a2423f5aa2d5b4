import { readFile } from 'node:fs/promises';
import { describeValue } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import { HttpProblem } from './http-util.js';

const STATUSES: ReadonlySet<string> = new Set(['same', 'diverged', 'failed', 'partial']);

/**
 * What is wrong with `value` as a replay report (`@signalyard/replay`'s `ReplayReport` as JSON:
 * `sessions`, each with a `sessionKey`, a `status` and its `turns` of `expected` / `actual`
 * summaries), or `undefined` when it is one. The page checks a report opened from disk the same
 * way. The inspector reads reports as JSON and never imports `@signalyard/replay`.
 * @internal
 */
function replayReportProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `expected a replay report object { sessions, same, diverged, failed, partial }, got ${describeValue(value)}`;
  const sessions = (value as { sessions?: unknown }).sessions;
  if (!Array.isArray(sessions)) return `expected sessions to be a list, got ${describeValue(sessions)}`;
  for (const [i, s] of sessions.entries()) {
    const session = s as { sessionKey?: unknown; status?: unknown; turns?: unknown } | null;
    if (typeof session !== 'object' || session === null)
      return `sessions[${i}]: expected an object, got ${describeValue(s)}`;
    if (typeof session.sessionKey !== 'string')
      return `sessions[${i}].sessionKey: expected a string, got ${describeValue(session.sessionKey)}`;
    if (typeof session.status !== 'string' || !STATUSES.has(session.status))
      return `sessions[${i}].status: expected same, diverged, failed or partial, got ${describeValue(session.status)}`;
    if (!Array.isArray(session.turns))
      return `sessions[${i}].turns: expected a list, got ${describeValue(session.turns)}`;
  }
  return undefined;
}

/**
 * Reads the replay report file at `path`.
 * @throws HttpProblem 404 `not_found` without a report file; 422 `replay_report_invalid` when it
 * cannot be read or is not a report (the message says why).
 * @internal
 */
export async function readReplayReport(path: string | undefined): Promise<unknown> {
  if (path === undefined) throw new HttpProblem(404, 'not_found', 'the inspector was started without a replay report');
  let report: unknown;
  try {
    report = JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch (error) {
    throw new HttpProblem(422, 'replay_report_invalid', `cannot read the replay report ${path}: ${errorText(error)}`);
  }
  const problem = replayReportProblem(report);
  if (problem !== undefined)
    throw new HttpProblem(422, 'replay_report_invalid', `${path} is not a replay report: ${problem}`);
  return report;
}
