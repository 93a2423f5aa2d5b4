import { describeValue, type TranscriptEntry } from '@signalyard/core';
import type { UIMessage } from 'ai';
import { UIMessageError } from '../errors/ui-message-error.js';
import { asRecord, errorText, jsonSafe, readToolCall } from './engine-event-fields.js';
import type { HandoffData } from './signalyard-ui-message.js';

type Part = UIMessage['parts'][number];

const fail = (path: string, problem: string): UIMessageError =>
  new UIMessageError({ code: 'UI_TRANSCRIPT_INVALID', path, problem });

const VIA: ReadonlySet<string> = new Set(['signal', 'parallel', 'fallback']);
const STATUS: ReadonlySet<string> = new Set(['done', 'error', 'denied', 'pending_approval']);

/**
 * Rebuilds the AI SDK `UIMessage`s of a conversation from a session's transcript
 * (`runner.transcript(sessionKey)`), for a page reload — the same parts a live stream of
 * {@link toUIMessageStream} produced, markers hidden:
 *
 * - each `user` entry → a user message with one text part (its `at`, when present, as
 *   `metadata.at`);
 * - each run of consecutive `assistant`, `handoff` and `tool` entries → **one** assistant message:
 *   a text part per assistant entry (none for empty text), a `data-handoff` part
 *   `{ from, to }` per handoff (plus `group` when the entry names one, as the live stream's parts
 *   by default: no `via`, no marker), and a tool part `tool-<name>` per tool entry in the state
 *   matching its status — `done` → `output-available` (with `output`), `error` →
 *   `output-error` (with `errorText`), `denied` → `output-denied`, `pending_approval` →
 *   `approval-requested` with `approval.id` = the entry's `approvalId`, ready for
 *   `addToolApprovalResponse`. A tool entry's `approvalId` also becomes the part's `approval`
 *   when the call was decided (`approved: true` once it ran, `false` when denied).
 *
 * Message ids are derived from the index of the message's first entry (`msg-0`, `msg-3`, …), so
 * a reload renders the same keys; to continue the last assistant message after an approval,
 * pass its id as `messageId` to `toUIMessageStreamResponse`.
 *
 * @throws UIMessageError `UI_TRANSCRIPT_INVALID` when `transcript` is not a list of transcript
 * entries (an unknown `type` or `status`, a missing field, a pending approval without
 * `approvalId`), naming the entry.
 *
 * @example
 * ```ts
 * // GET /api/chat/:id → the messages to pass to useChat({ id, messages })
 * const messages = transcriptToUIMessages(await runner.transcript(sessionKey));
 * return Response.json(messages);
 * ```
 */
export function transcriptToUIMessages(transcript: readonly TranscriptEntry[]): UIMessage[] {
  const entries: unknown = transcript;
  if (!Array.isArray(entries)) {
    throw fail('transcript', `expected a list of transcript entries, got ${describeValue(entries)}`);
  }
  const messages: UIMessage[] = [];
  let assistant: UIMessage | undefined;
  for (let i = 0; i < entries.length; i++) {
    const path = `transcript[${i}]`;
    const entry = asRecord(entries[i]);
    if (entry === undefined)
      throw fail(path, `expected a transcript entry ({ type, … }), got ${describeValue(entries[i])}`);
    if (entry.type === 'user') {
      const text = stringField(entry, 'text', path);
      const { at } = entry;
      if (at !== undefined && typeof at !== 'string')
        throw fail(`${path}.at`, `expected a string, got ${describeValue(at)}`);
      assistant = undefined;
      messages.push({
        id: `msg-${i}`,
        role: 'user',
        ...(at === undefined ? {} : { metadata: { at } }),
        parts: [{ type: 'text', text }],
      });
      continue;
    }
    const part = assistantPart(entry, path);
    if (assistant === undefined) {
      assistant = { id: `msg-${i}`, role: 'assistant', parts: [] };
      messages.push(assistant);
    }
    if (part !== undefined) assistant.parts.push(part);
  }
  // An assistant run with nothing to show (only empty replies) renders nothing: leave it out.
  return messages.filter((m) => m.parts.length > 0);
}

function assistantPart(entry: Readonly<Record<string, unknown>>, path: string): Part | undefined {
  switch (entry.type) {
    case 'assistant': {
      stringField(entry, 'agentId', path);
      const text = stringField(entry, 'text', path);
      return text === '' ? undefined : { type: 'text', text, state: 'done' };
    }
    case 'handoff': {
      const from = stringField(entry, 'from', path);
      const to = stringField(entry, 'to', path);
      const via = stringField(entry, 'via', path);
      if (!VIA.has(via))
        throw fail(`${path}.via`, `expected "signal", "parallel" or "fallback", got ${JSON.stringify(via)}`);
      const group = entry.group;
      if (group !== undefined && typeof group !== 'string')
        throw fail(`${path}.group`, `expected a string, got ${describeValue(group)}`);
      const data: HandoffData = group === undefined ? { from, to } : { from, to, group };
      return { type: 'data-handoff', data };
    }
    case 'tool':
      return toolPart(entry, path);
    default:
      throw fail(`${path}.type`, `expected "user", "assistant", "handoff" or "tool", got ${describeValue(entry.type)}`);
  }
}

function toolPart(entry: Readonly<Record<string, unknown>>, path: string): Part {
  const call = readToolCall(entry.call);
  if (call === undefined) {
    throw fail(`${path}.call`, `expected a tool call ({ id, name, arguments }), got ${describeValue(entry.call)}`);
  }
  const status = stringField(entry, 'status', path);
  if (!STATUS.has(status)) {
    throw fail(
      `${path}.status`,
      `expected "done", "error", "denied" or "pending_approval", got ${JSON.stringify(status)}`,
    );
  }
  const { approvalId } = entry;
  if (approvalId !== undefined && (typeof approvalId !== 'string' || approvalId === '')) {
    throw fail(`${path}.approvalId`, `expected a non-empty string, got ${describeValue(approvalId)}`);
  }
  const base = { type: `tool-${call.name}`, toolCallId: call.id, input: jsonSafe(call.arguments) } as const;
  switch (status) {
    case 'done':
      return {
        ...base,
        state: 'output-available',
        output: jsonSafe(entry.result),
        ...(approvalId === undefined ? {} : { approval: { id: approvalId, approved: true } }),
      };
    case 'error':
      return {
        ...base,
        state: 'output-error',
        errorText: errorText(entry.result),
        ...(approvalId === undefined ? {} : { approval: { id: approvalId, approved: true } }),
      };
    case 'denied': {
      const reason = deniedReason(entry.result);
      // The AI SDK's type wants an approval on every denied part; a call a policy refused was
      // never put to a person and has none (a live stream shows it the same way).
      return {
        ...base,
        state: 'output-denied',
        ...(approvalId === undefined
          ? {}
          : {
              approval:
                reason === undefined
                  ? { id: approvalId, approved: false }
                  : { id: approvalId, approved: false, reason },
            }),
      } as Part;
    }
    default:
      if (approvalId === undefined) {
        throw fail(
          `${path}.approvalId`,
          'a pending approval needs its approvalId (the id a decision answers), got undefined',
        );
      }
      return { ...base, state: 'approval-requested', approval: { id: approvalId } };
  }
}

/** The reason of a `denied: <reason>` tool result. */
function deniedReason(result: unknown): string | undefined {
  const text = result instanceof Error ? result.message : result;
  if (typeof text !== 'string') return undefined;
  const match = /^denied: ?(.+)$/s.exec(text);
  return match?.[1];
}

function stringField(entry: Readonly<Record<string, unknown>>, key: string, path: string): string {
  const value = entry[key];
  if (typeof value !== 'string') throw fail(`${path}.${key}`, `expected a string, got ${describeValue(value)}`);
  return value;
}
