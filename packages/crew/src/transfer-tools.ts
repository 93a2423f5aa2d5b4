import { describeValue, type ToolCall } from '@signalyard/core';
import { deepFreeze, isRecord } from '@signalyard/core/internal';
import type { HandoffMode, ResumeAt } from './crew-config.js';

// Handoffs as tool calls (`handoff_mode: tool | both`): the names, descriptions and argument
// schema of the transfer tools generated from an agent's routing signals, and the check of a
// transfer call's arguments. One place for these rules: the config's validation, the compiled
// crew, the decision on a reply and the graph all read them from here.

/** The values of `settings.handoff_mode`. @internal */
export const HANDOFF_MODES = ['marker', 'tool', 'both'] as const satisfies readonly HandoffMode[];

/** The values of `settings.resume_at`. @internal */
export const RESUME_AT = ['entry', 'last_agent'] as const satisfies readonly ResumeAt[];

/** What every model provider accepts as a tool name. @internal */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The name of the transfer tool for a termination signal (target `""`) without a `tool` of its own. */
const FINISH_TOOL = 'finish';

/**
 * The transfer tool a routing signal is offered as: its own `tool` when it names one, else
 * `transfer_to_<target>` (an agent or a parallel group), or `finish` for target `""`. Not checked
 * against {@link TOOL_NAME} (the config's validation does that).
 * @internal
 */
export function transferToolName(signal: { readonly target: string; readonly tool?: string | undefined }): string {
  if (signal.tool !== undefined) return signal.tool;
  return signal.target === '' ? FINISH_TOOL : `transfer_to_${signal.target}`;
}

/** True when transfer tools are offered in `mode` (`tool` and `both`). @internal */
export function offersTransferTools(mode: HandoffMode): boolean {
  return mode !== 'marker';
}

/** The JSON Schema of every transfer tool's arguments: an optional `reason`. @internal */
export const TRANSFER_PARAMETERS: Readonly<Record<string, unknown>> = deepFreeze({
  type: 'object',
  properties: {
    reason: {
      type: 'string',
      description: 'Optional: why, in one short sentence (shown to the people who follow the conversation).',
    },
  },
  additionalProperties: false,
});

/**
 * The description of a transfer tool, from what it leads to — `to` (the target agent's name and
 * description, a parallel group's members, or the end of the run) — and the signal's own
 * `description`, e.g. `Transfer the conversation to Billing (agent "billing"). Handles invoices.
 * Use when the customer asks about money.`
 * @internal
 */
export function transferDescription(
  to:
    | { readonly kind: 'agent'; readonly id: string; readonly name?: string; readonly description?: string }
    | { readonly kind: 'group'; readonly id: string; readonly agents: readonly string[] }
    | { readonly kind: 'finish' },
  signalDescription: string | undefined,
): string {
  let text: string;
  if (to.kind === 'agent') {
    const who = to.name === undefined || to.name === to.id ? `agent "${to.id}"` : `${to.name} (agent "${to.id}")`;
    text = `Transfer the conversation to ${who}.`;
    if (to.description !== undefined && to.description !== '') text += ` ${to.description}`;
  } else if (to.kind === 'group') {
    const members = to.agents.map((a) => `"${a}"`).join(', ');
    text = `Ask the agents ${members} at once (parallel group "${to.id}"); their answers come back together.`;
  } else {
    text = 'Finish: your reply is complete and the run ends here.';
  }
  return signalDescription === undefined || signalDescription === '' ? text : `${text} ${signalDescription}`;
}

/**
 * A transfer call's arguments read: `{ reason? }`, or why they are not valid transfer arguments
 * (an object with at most a string `reason`; a call with no arguments at all is valid).
 * @internal
 */
export function readTransferArguments(
  call: ToolCall,
): { readonly ok: true; readonly reason: string | undefined } | { readonly ok: false; readonly problem: string } {
  const args: unknown = call.arguments;
  if (args === undefined || args === null) return { ok: true, reason: undefined };
  if (!isRecord(args))
    return { ok: false, problem: `expected an object { reason?: string }, got ${describeValue(args)}` };
  for (const key of Object.keys(args)) {
    if (key !== 'reason')
      return { ok: false, problem: `unknown argument ${JSON.stringify(key)} (expected only "reason")` };
  }
  const reason: unknown = args.reason;
  if (reason !== undefined && typeof reason !== 'string')
    return { ok: false, problem: `reason must be a string, got ${describeValue(reason)}` };
  return { ok: true, reason: reason === '' ? undefined : reason };
}
