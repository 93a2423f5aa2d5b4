import { describeValue, type ApprovalDecision } from '@signalyard/core';
import type { UIMessage } from 'ai';
import { UIMessageError } from '../errors/ui-message-error.js';
import { asRecord } from './engine-event-fields.js';

const fail = (path: string, problem: string): UIMessageError =>
  new UIMessageError({ code: 'UI_MESSAGES_INVALID', path, problem });

/**
 * Reads the tool-approval answers an AI SDK client recorded (`addToolApprovalResponse` in
 * `useChat` / `Chat`) back into Signalyard `ApprovalDecision`s, for `runner.streamApprove` or
 * `runner.approve`.
 *
 * The rule: only the **last assistant message** is read (the last message whose `role` is
 * `'assistant'`) — the message whose approval requests the person just answered; earlier
 * messages' approvals were decided before. In it, every tool part (`tool-<name>` or
 * `dynamic-tool`) in the state `approval-responded` gives `{ id: approval.id, approved:
 * approval.approved, reason? }`, in part order. Parts without a response (still
 * `approval-requested`, or already answered and run) are ignored; no assistant message → `[]`.
 *
 * @throws UIMessageError `UI_MESSAGES_INVALID` when `messages` is not a list of UI messages
 * (each an object with a string `role`, the read message with a `parts` list of objects), when
 * a responded part's `approval` lacks a string `id` or a boolean `approved` or has a `reason`
 * that is not a string (`null` counts as none), or when two parts answer the same approval id — naming the bad value's path.
 *
 * @example
 * ```ts
 * // POST /api/chat, after the person clicked "Approve" in the browser
 * const { id, messages } = await request.json();
 * const decisions = approvalsFromUIMessages(messages);   // [{ id: 'ap-1', approved: true }]
 * if (decisions.length > 0) {
 *   const lastAssistant = messages.findLast((m) => m.role === 'assistant');
 *   return toUIMessageStreamResponse(runner.streamApprove(sessionKey, decisions), { messageId: lastAssistant.id });
 * }
 * ```
 */
export function approvalsFromUIMessages(messages: readonly UIMessage[]): ApprovalDecision[] {
  const list: unknown = messages;
  if (!Array.isArray(list)) throw fail('messages', `expected a list of UI messages, got ${describeValue(list)}`);
  let last: { message: Readonly<Record<string, unknown>>; index: number } | undefined;
  for (let i = 0; i < list.length; i++) {
    const message = asRecord(list[i]);
    if (message === undefined) {
      throw fail(`messages[${i}]`, `expected a UI message ({ id, role, parts }), got ${describeValue(list[i])}`);
    }
    if (typeof message.role !== 'string') {
      throw fail(`messages[${i}].role`, `expected a string, got ${describeValue(message.role)}`);
    }
    if (message.role === 'assistant') last = { message, index: i };
  }
  if (last === undefined) return [];

  const path = `messages[${last.index}].parts`;
  const { parts } = last.message;
  if (!Array.isArray(parts)) throw fail(path, `expected a list of message parts, got ${describeValue(parts)}`);
  const decisions: ApprovalDecision[] = [];
  const seen = new Map<string, number>();
  for (let j = 0; j < parts.length; j++) {
    const partPath = `${path}[${j}]`;
    const part = asRecord(parts[j]);
    if (part === undefined)
      throw fail(partPath, `expected a message part ({ type, … }), got ${describeValue(parts[j])}`);
    const { type } = part;
    const isTool = typeof type === 'string' && (type.startsWith('tool-') || type === 'dynamic-tool');
    if (!isTool || part.state !== 'approval-responded') continue;
    const approval = asRecord(part.approval);
    if (approval === undefined) {
      throw fail(
        `${partPath}.approval`,
        `expected the approval response ({ id, approved, reason? }), got ${describeValue(part.approval)}`,
      );
    }
    const { id, approved, reason } = approval;
    if (typeof id !== 'string' || id === '') {
      throw fail(`${partPath}.approval.id`, `expected a non-empty string, got ${describeValue(id)}`);
    }
    if (typeof approved !== 'boolean') {
      throw fail(`${partPath}.approval.approved`, `expected a boolean, got ${describeValue(approved)}`);
    }
    if (reason !== undefined && reason !== null && typeof reason !== 'string') {
      throw fail(`${partPath}.approval.reason`, `expected a string, got ${describeValue(reason)}`);
    }
    const earlier = seen.get(id);
    if (earlier !== undefined) {
      throw fail(
        `${partPath}.approval.id`,
        `approval ${JSON.stringify(id)} is answered twice (also at ${path}[${earlier}]): expected one answer per approval`,
      );
    }
    seen.set(id, j);
    decisions.push(typeof reason === 'string' ? { id, approved, reason } : { id, approved });
  }
  return decisions;
}
