import { describeValue, type ApprovalDecision, type ChatMessage, type PendingApproval } from '@signalyard/core';
import { isRecord } from '@signalyard/core/internal';
import { messageProblem } from './crew-history.js';
import type { CrewBatchCall, CrewToolBatch } from './crew-state.js';
import type { ApprovalBook } from './run-context.js';

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const STATUSES: ReadonlySet<string> = new Set(['held', 'approved', 'started', 'done']);

/**
 * `state.approvals` read into a fresh {@link ApprovalBook} (nothing shared with the given state),
 * or why it is not a `CrewApprovalState` (as `{ problem }`, naming the path). `historyLength`
 * bounds `batch.at`; `isAgent` checks `batch.agentId`.
 * @internal
 */
export function readApprovalState(
  value: unknown,
  historyLength: number,
  isAgent: (id: string) => boolean,
): ApprovalBook | { readonly problem: string } {
  if (value === undefined) return { issued: 0, decided: [], batch: undefined };
  const bad = (path: string, got: unknown, expected: string) => ({
    problem: `Invalid state.approvals${path} ${describeValue(got)}: expected ${expected}`,
  });
  if (!isRecord(value)) return bad('', value, 'a CrewApprovalState { issued, decided, batch? } from a previous run');
  if (!isCount(value.issued)) return bad('.issued', value.issued, 'a count (a non-negative integer)');
  const decided: unknown = value.decided;
  if (!Array.isArray(decided) || !decided.every((id) => typeof id === 'string'))
    return bad('.decided', decided, 'a list of approval ids');
  if (value.batch === undefined) return { issued: value.issued, decided: decided.slice(), batch: undefined };
  const batch = readBatch(value.batch, historyLength, isAgent);
  if ('problem' in batch) return { problem: `Invalid state.approvals.batch${batch.problem}` };
  return { issued: value.issued, decided: decided.slice(), batch };
}

/** A batch copied from JSON, or `{ problem }` (starting with the path inside the batch). */
function readBatch(
  value: unknown,
  historyLength: number,
  isAgent: (id: string) => boolean,
): CrewToolBatch | { readonly problem: string } {
  const bad = (path: string, got: unknown, expected: string) => ({
    problem: `${path} ${describeValue(got)}: expected ${expected}`,
  });
  if (!isRecord(value)) return bad('', value, 'a CrewToolBatch { agentId, message, calls, at, run }');
  if (typeof value.agentId !== 'string' || !isAgent(value.agentId))
    return bad('.agentId', value.agentId, 'an agent of the crew');
  const message: unknown = value.message;
  const messageIssue = messageProblem(message);
  if (messageIssue !== undefined) return { problem: `.message: ${messageIssue}` };
  const m = message as ChatMessage;
  if (m.role !== 'assistant' || m.toolCalls === undefined || m.toolCalls.length === 0)
    return bad('.message', message, 'the assistant message carrying the tool calls');
  if (!isCount(value.at) || value.at > historyLength)
    return bad('.at', value.at, `a position in the history (0 to ${historyLength})`);
  const run = readProgress(value.run);
  if ('problem' in run) return { problem: `.run${run.problem}` };
  const calls: unknown = value.calls;
  if (!Array.isArray(calls) || calls.length !== m.toolCalls.length)
    return bad('.calls', calls, `a list of ${m.toolCalls.length} calls, one per tool call of the message`);
  const entries: CrewBatchCall[] = [];
  for (let i = 0; i < calls.length; i++) {
    const entry = readCall(calls[i]);
    if (typeof entry === 'string') return { problem: `.calls[${i}]${entry}` };
    entries.push(entry);
  }
  return { agentId: value.agentId, message: m, calls: entries, at: value.at, run };
}

function readProgress(value: unknown): CrewToolBatch['run'] | { readonly problem: string } {
  const bad = (path: string, got: unknown, expected: string) => ({
    problem: `${path} ${describeValue(got)}: expected ${expected}`,
  });
  if (!isRecord(value)) return bad('', value, '{ modelCalls, handoffs, toolRounds, path }');
  for (const key of ['modelCalls', 'handoffs', 'toolRounds'] as const)
    if (!isCount(value[key])) return bad(`.${key}`, value[key], 'a count (a non-negative integer)');
  const path: unknown = value.path;
  if (!Array.isArray(path) || path.length === 0 || !path.every((id) => typeof id === 'string'))
    return bad('.path', path, 'a non-empty list of agent ids');
  return {
    modelCalls: value.modelCalls as number,
    handoffs: value.handoffs as number,
    toolRounds: value.toolRounds as number,
    path: path.slice(),
  };
}

/** One batch call copied from JSON, or a problem (starting with the path inside the call). */
function readCall(value: unknown): CrewBatchCall | string {
  if (!isRecord(value)) return ` ${describeValue(value)}: expected { status, approval?, content?, isError? }`;
  const status: unknown = value.status;
  if (typeof status !== 'string' || !STATUSES.has(status))
    return `.status ${describeValue(status)}: expected "held", "approved", "started" or "done"`;
  const entry: CrewBatchCall = { status: status as CrewBatchCall['status'] };
  if (value.approval !== undefined) {
    const approval = value.approval;
    if (!isRecord(approval) || typeof approval.id !== 'string' || typeof approval.toolCallId !== 'string')
      return `.approval ${describeValue(approval)}: expected a PendingApproval { id, toolCallId, … }`;
    entry.approval = Object.freeze({ ...approval }) as unknown as PendingApproval;
  } else if (status === 'held') return `.approval: a held call needs its PendingApproval`;
  if (status === 'done') {
    if (typeof value.content !== 'string')
      return `.content ${describeValue(value.content)}: expected the tool message text`;
    entry.content = value.content;
    entry.isError = value.isError === true;
  }
  return entry;
}

/**
 * `opts.approvals` checked: a list of `{ id, approved, reason? }` (other keys are ignored), or
 * why not.
 * @internal
 */
export function readDecisions(value: unknown): readonly ApprovalDecision[] | { readonly problem: string } {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    return { problem: `Invalid approvals ${describeValue(value)}: expected a list of { id, approved, reason? }` };
  const out: ApprovalDecision[] = [];
  for (let i = 0; i < value.length; i++) {
    const d: unknown = value[i];
    const at = `approvals[${i}]`;
    if (!isRecord(d)) return { problem: `Invalid ${at} ${describeValue(d)}: expected { id, approved, reason? }` };
    if (typeof d.id !== 'string' || d.id === '')
      return { problem: `Invalid ${at}.id ${describeValue(d.id)}: expected an approval id such as "ap-1"` };
    if (typeof d.approved !== 'boolean')
      return { problem: `Invalid ${at}.approved ${describeValue(d.approved)}: expected true or false` };
    if (d.reason !== undefined && typeof d.reason !== 'string')
      return { problem: `Invalid ${at}.reason ${describeValue(d.reason)}: expected a string` };
    out.push(
      d.reason === undefined
        ? { id: d.id, approved: d.approved }
        : { id: d.id, approved: d.approved, reason: d.reason },
    );
  }
  return out;
}

/**
 * The first decision's id that `book` never issued or no longer remembers (neither a call of
 * the batch nor a recently decided id), or `undefined`.
 * @internal
 */
export function unknownApprovalId(book: ApprovalBook, decisions: readonly ApprovalDecision[]): string | undefined {
  if (decisions.length === 0) return undefined;
  const known = new Set(book.decided);
  for (const entry of book.batch?.calls ?? []) if (entry.approval !== undefined) known.add(entry.approval.id);
  return decisions.find((d) => !known.has(d.id))?.id;
}
