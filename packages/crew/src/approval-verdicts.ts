import { decideApproval, type ApprovalVerdict, type Tool, type ToolCall } from '@signalyard/core';
import { agentTools } from './mcp-tools.js';
import { errorText } from '@signalyard/core/internal';
import type { CompiledAgent } from './compiled-crew.js';
import type { Run } from './run-context.js';

/**
 * The decide step for one reply's tool calls: core's `decideApproval` with the crew's policy
 * (`approvals:`) and each tool's `needsApproval` and `approvalHint`, in call order. `undefined` when every call runs
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
    try {
      verdicts.push(await decideApproval(policy, call, tool, { toolCallId: call.id, agentId: agent.id, abortSignal }));
    } catch (error) {
      verdicts.push({ decision: 'deny', reason: `the approval check failed: ${errorText(error)}` });
    }
  }
  return verdicts;
}

/** Whether `tool` may ask: a `needsApproval` that is not `false`, or an `approvalHint` (an `allow` hint can override a policy's default only, and without a policy there is none). */
function asks(tool: Tool | undefined): boolean {
  const needs = tool?.needsApproval;
  return (needs !== undefined && needs !== false) || tool?.approvalHint === 'ask';
}
