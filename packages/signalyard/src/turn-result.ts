import { describeValue, isAction, type Action, type ChatMessage } from '@signalyard/core';
import { actionProblem, configProblemsFromZod } from '@signalyard/core/internal';
import * as z from 'zod';
import { pendingApprovalsProblem } from './approvals.js';

// What an engine may return. The zod schema is the rule and writes the messages; a turn whose
// result is well formed (nearly every turn) is accepted by a cheap check that accepts only what
// the schema accepts, so the schema runs only to say what is wrong.

const ROLES: readonly ChatMessage['role'][] = ['system', 'user', 'assistant', 'tool'];
const STATUSES = ['completed', 'paused'] as const;

/** The error option of a field: `is <value>, expected <what>`. */
const expected = (what: string) => ({
  error: (issue: { input?: unknown }) => `is ${describeValue(issue.input)}, expected ${what}`,
});

const chatMessageSchema = z.looseObject(
  {
    role: z.enum(ROLES as [ChatMessage['role'], ...ChatMessage['role'][]], expected(quotedList(ROLES))),
    content: z.string(expected('a string')),
  },
  expected('a chat message { role, content }'),
);

const actionSchema = z
  .custom<Action>(isAction, {
    error: (issue) => `is not an Action: ${actionProblem(issue.input) ?? 'expected an Action'}`,
  })
  // Checked before any action runs, so a turn returning it applies none of its actions.
  .refine((a) => a.type !== 'continue', {
    error: 'is the action "continue", which a turn cannot return (the turn is what "continue" runs)',
  });

/** The schema of a `TurnResult` (`undefined` is a turn that did nothing). @internal */
export const turnResultSchema = z
  .looseObject(
    {
      messages: z.array(chatMessageSchema, expected('a list of chat messages')).optional(),
      status: z.enum(STATUSES, expected(quotedList(STATUSES))).optional(),
      actions: z.array(actionSchema, expected('a list of actions')).optional(),
      pendingApprovals: z
        .custom((value) => pendingApprovalsProblem(value) === undefined, {
          error: (issue) =>
            `is invalid: ${pendingApprovalsProblem(issue.input) ?? 'expected a list of PendingApproval'}`,
        })
        .optional(),
      reply: z.string(expected('a string')).optional(),
    },
    {
      error: (issue) =>
        `${describeValue(issue.input)}, expected a TurnResult object { messages?, state?, output?, status?, actions?, pendingApprovals?, reply? }`,
    },
  )
  .optional();

/** At most this many problems are spelled out in one message. */
const MAX_LISTED = 5;

/**
 * Why `result` is not a `TurnResult` (`undefined` when it is one, or is `undefined`): every
 * problem with its path and bad value, e.g. `a TurnResult whose messages[0].role is "robot",
 * expected "system", "user", "assistant" or "tool"`. May throw when reading `result` throws (a
 * throwing getter, a hostile Proxy).
 * @internal
 */
export function turnResultProblem(result: unknown): string | undefined {
  if (isWellFormedTurnResult(result)) return undefined;
  const parsed = turnResultSchema.safeParse(result);
  if (parsed.success) return undefined;
  const problems = configProblemsFromZod(parsed.error.issues);
  const root = problems.find((p) => p.path === '');
  if (root !== undefined) return root.message;
  const listed = problems.slice(0, MAX_LISTED).map((p) => `${p.path} ${p.message}`);
  const more = problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more problems` : '';
  return `a TurnResult whose ${listed.join('; whose ')}${more}`;
}

/**
 * The fast path: true only for values {@link turnResultSchema} accepts (a test checks this on
 * a corpus of good and bad results); false sends the value to the schema, which decides.
 */
export function isWellFormedTurnResult(result: unknown): boolean {
  if (result === undefined) return true;
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return false;
  const { messages, status, actions, pendingApprovals, reply } = result as {
    reply?: unknown;
    messages?: unknown;
    status?: unknown;
    actions?: unknown;
    pendingApprovals?: unknown;
  };
  if (pendingApprovals !== undefined && pendingApprovalsProblem(pendingApprovals) !== undefined) return false;
  if (status !== undefined && status !== 'completed' && status !== 'paused') return false;
  if (reply !== undefined && typeof reply !== 'string') return false;
  if (messages !== undefined) {
    if (!Array.isArray(messages)) return false;
    for (const m of messages as unknown[]) if (!isChatMessage(m)) return false;
  }
  if (actions !== undefined) {
    if (!Array.isArray(actions)) return false;
    for (const a of actions as unknown[]) if (!isAction(a) || a.type === 'continue') return false;
  }
  return true;
}

function isChatMessage(m: unknown): boolean {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
  const { role, content } = m as { role?: unknown; content?: unknown };
  return (
    typeof content === 'string' && (role === 'assistant' || role === 'user' || role === 'tool' || role === 'system')
  );
}

function quotedList(values: readonly string[]): string {
  const quoted = values.map((v) => JSON.stringify(v));
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}
