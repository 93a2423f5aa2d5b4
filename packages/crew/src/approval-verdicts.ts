import { decideApproval, type ApprovalVerdict, type Tool, type ToolCall } from '@signalyard/core';
import { agentTools } from './mcp-tools.js';
import { errorText } from '@signalyard/core/internal';
import type { CompiledAgent } from './compiled-crew.js';
import type { CrewEvent } from './crew-events.js';
import type { Run } from './run-context.js';

/**
 * The decide step for one reply's tool calls: core's `decideApproval` with the crew's policy
 * (`approvals:`) and each tool's `needsApproval` and `approvalHint`, in call order, each verdict
 * reported by an `approval_decided` event (`group`: the parallel group of a member's reply).
 * `undefined` when every call runs
 * without asking anything (no policy, no tool of these calls with `needsApproval`), so a crew
 * without approvals pays nothing.
 *
 * A call to a tool the agent does not have is `allow`ed: it cannot run, and is answered with the
 * unknown-tool error as before. So is a transfer call: transfer tools are never among the
 * agent's tools (the config forbids the names), so they never go through approvals. A `needsApproval` that throws denies the call (the reason says
 * why): a check that cannot be made never lets a call through.
 * @internal
 */
export async function decideCalls(
  run: Run,
  agent: CompiledAgent,
  calls: readonly ToolCall[],
  abortSignal: AbortSignal,
  group: string | undefined,
): Promise<ApprovalVerdict[] | undefined> {
  const policy = run.crew.config.approvals;
  const tools = agentTools(run, agent).tools;
  if (policy === undefined && !calls.some((c) => asks(tools.get(c.name)))) return undefined;
  const verdicts: ApprovalVerdict[] = [];
  for (const call of calls) {
    const tool = tools.get(call.name);
    if (tool === undefined) {
      verdicts.push({ decision: 'allow' });
      continue;
    }
    let verdict: ApprovalVerdict;
    try {
      verdict = await decideApproval(policy, call, tool, { toolCallId: call.id, agentId: agent.id, abortSignal });
    } catch (error) {
      verdict = { decision: 'deny', reason: `the approval check failed: ${errorText(error)}` };
    }
    verdicts.push(verdict);
    run.emit?.(decidedEvent(agent, call, verdict, group));
  }
  return verdicts;
}

/** The `approval_decided` event of one call's verdict. */
function decidedEvent(
  agent: CompiledAgent,
  call: ToolCall,
  verdict: ApprovalVerdict,
  group: string | undefined,
): CrewEvent {
  const event: CrewEvent = {
    type: 'approval_decided',
    agentId: agent.id,
    toolCallId: call.id,
    toolName: call.name,
    decision: verdict.decision,
  };
  if (verdict.reason !== undefined) event.reason = verdict.reason;
  if (verdict.rule !== undefined) event.rule = verdict.rule;
  if (verdict.ruleName !== undefined) event.ruleName = verdict.ruleName;
  if (group !== undefined) event.group = group;
  return event;
}

/** Whether `tool` may ask: a `needsApproval` that is not `false`, or an `approvalHint` (an `allow` hint can override a policy's default only, and without a policy there is none). */
function asks(tool: Tool | undefined): boolean {
  const needs = tool?.needsApproval;
  return (needs !== undefined && needs !== false) || tool?.approvalHint === 'ask';
}
