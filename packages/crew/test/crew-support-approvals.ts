// Helpers shared by the approval tests (not a test file itself).
import type { ApprovalPolicy, ChatResponse, Tool, ToolCall } from '@signalyard/core';
import type { CrewConfigInput, CrewEvent } from '@signalyard/crew';

/** A crew of a clerk (tools refund, lookup, wipe) who can hand off to a boss (tool refund). */
export function approvalCrew(
  approvals?: ApprovalPolicy,
  settings: CrewConfigInput['settings'] = {},
  extra: Partial<CrewConfigInput> = {},
): CrewConfigInput {
  return {
    entryPoint: 'clerk',
    agents: [
      { id: 'clerk', tools: ['refund', 'lookup', 'wipe'] },
      { id: 'boss', tools: ['refund'] },
    ],
    settings,
    routing: {
      signals: {
        clerk: [
          { signal: '[DONE]', target: '' },
          { signal: '[BOSS]', target: 'boss' },
        ],
        boss: [{ signal: '[DONE]', target: '' }],
      },
    },
    ...(approvals === undefined ? {} : { approvals }),
    ...extra,
  };
}

/** Refunds above 100 are asked, `wipe` is denied, the rest runs. */
export const POLICY: ApprovalPolicy = {
  rules: [
    { tool: 'refund', when: [{ path: 'amount', gt: 100 }], decision: 'ask', reason: 'large refund' },
    { tool: 'wipe', decision: 'deny', reason: 'never' },
  ],
};

/** The clerk's tools, recording every execution as `name:args` in `runs`. */
export function recordingTools(): { tools: Tool[]; runs: string[] } {
  const runs: string[] = [];
  const tool = (name: string): Tool => ({
    name,
    parameters: { type: 'object' },
    execute: (args) => {
      runs.push(`${name}:${JSON.stringify(args)}`);
      return Promise.resolve(`${name} ok`);
    },
  });
  return { tools: [tool('refund'), tool('lookup'), tool('wipe')], runs };
}

/** A reply with the given calls. */
export function calls(content: string, ...list: [id: string, name: string, args: unknown][]): ChatResponse {
  return { content, toolCalls: list.map(([id, name, args]): ToolCall => ({ id, name, arguments: args })) };
}

/** The events of `type`. */
export function eventsOf<T extends CrewEvent['type']>(
  events: readonly CrewEvent[],
  type: T,
): Extract<CrewEvent, { type: T }>[] {
  return events.filter((e): e is Extract<CrewEvent, { type: T }> => e.type === type);
}

/** A JSON round trip. */
export function roundTrip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
