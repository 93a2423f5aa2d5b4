import type { ApprovalDecisionKind, ApprovalPolicy } from './approval.js';
import { approvalPolicyProblems, isCheckedPolicy } from './internal/approval-policy-schemas.js';
import { conditionHolds } from './arg-condition.js';
import { ConfigError } from './errors/config-error.js';
import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import type { Tool, ToolCall, ToolContext } from './model.js';
import { describeValue } from './signal.js';

/** What {@link decideApproval} decided for one tool call, and why. */
export interface ApprovalVerdict {
  /** Run the call (`allow`), hold it for a person (`ask`), or refuse it (`deny`). */
  readonly decision: ApprovalDecisionKind;
  /** The deciding rule's `reason`, when it has one. */
  readonly reason?: string;
  /** The index of the deciding rule in `policy.rules`; absent when no rule matched. */
  readonly rule?: number;
}

/**
 * Decides whether a tool call runs, waits for a person, or is refused, by an
 * {@link ApprovalPolicy} (pure data) and the tool's own `needsApproval`:
 *
 * 1. The policy's rules are tried in order; the first whose `tool` is the call's name (or `*`)
 *    and whose `when` conditions all hold decides: `{ decision, reason?, rule: <its index> }`.
 * 2. With no matching rule: `ask` when the tool's `needsApproval` is `true` or a function that
 *    returns (or resolves) exactly `true` — called with the call's arguments and `ctx`;
 * 3. else the tool's `approvalHint` (`'ask'` or `'allow'`, e.g. from an MCP server's annotations);
 * 4. else the policy's `default` (`allow` when absent, or with no policy at all).
 *
 * A condition on a missing path fails (unless it is `exists: false`), a number test on a
 * non-number fails, string tests apply to strings only, `equals`/`in` compare JSON values
 * structurally. `tool` is `undefined` for a call naming no known tool (then only the policy
 * decides). A `needsApproval` function that throws rejects the returned promise with its error.
 *
 * A policy made by {@link parseApprovalPolicy} or {@link approvalPolicySchema} is used as it is;
 * any other is validated first.
 *
 * @throws ConfigError `CONFIG_INVALID` (as a rejection) when `policy` is not a valid policy,
 * listing every problem.
 * @throws InvalidArgumentError `APPROVAL_ARGUMENT_INVALID` (as a rejection) when `call` is not a
 * `ToolCall`, `tool` is not a `Tool` for that call, or `ctx` is not an object.
 *
 * @example
 * ```ts
 * const policy = parseApprovalPolicy({
 *   rules: [{ tool: 'refund', when: [{ path: 'amount', gt: 100 }], decision: 'ask', reason: 'large refund' }],
 * });
 * const call = { id: 'c1', name: 'refund', arguments: { amount: 250 } };
 * await decideApproval(policy, call, refundTool, { toolCallId: call.id });
 * // { decision: 'ask', reason: 'large refund', rule: 0 }
 * ```
 */
export async function decideApproval(
  policy: ApprovalPolicy | undefined,
  call: ToolCall,
  tool: Tool | undefined,
  ctx: ToolContext,
): Promise<ApprovalVerdict> {
  const checked = checkedPolicy(policy);
  checkArguments(call, tool, ctx);
  const rules = checked?.rules ?? [];
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index];
    if (rule === undefined || (rule.tool !== '*' && rule.tool !== call.name)) continue;
    if (rule.when !== undefined && !rule.when.every((condition) => conditionHolds(condition, call.arguments))) continue;
    return rule.reason === undefined
      ? { decision: rule.decision, rule: index }
      : { decision: rule.decision, reason: rule.reason, rule: index };
  }
  const needs = tool?.needsApproval;
  if (needs === true) return { decision: 'ask' };
  if (typeof needs === 'function') {
    // exactly `true` asks: a truthy non-boolean from a hand-written function does not
    const answer: unknown = await needs.call(tool, call.arguments, ctx);
    if (answer === true) return { decision: 'ask' };
  }
  const hint = tool?.approvalHint;
  if (hint === 'ask' || hint === 'allow') return { decision: hint };
  return { decision: checked?.default ?? 'allow' };
}

function checkedPolicy(policy: ApprovalPolicy | undefined): ApprovalPolicy | undefined {
  if (policy === undefined) return undefined;
  if (typeof policy === 'object' && (policy as unknown) !== null && isCheckedPolicy(policy)) return policy;
  const { policy: parsed, problems } = approvalPolicyProblems(policy);
  if (problems !== undefined) throw new ConfigError({ problems });
  return parsed;
}

function checkArguments(call: unknown, tool: unknown, ctx: unknown): void {
  const problem = argumentsProblem(call, tool, ctx);
  if (problem === undefined) return;
  throw new InvalidArgumentError({ code: 'APPROVAL_ARGUMENT_INVALID', message: `decideApproval: ${problem}` });
}

function argumentsProblem(call: unknown, tool: unknown, ctx: unknown): string | undefined {
  if (typeof call !== 'object' || call === null)
    return `invalid call ${describeValue(call)}: expected a ToolCall { id, name, arguments }`;
  const { id, name } = call as { id?: unknown; name?: unknown };
  if (typeof id !== 'string') return `invalid call id ${describeValue(id)}: expected a string`;
  if (typeof name !== 'string') return `invalid call name ${describeValue(name)}: expected a string`;
  if (tool !== undefined) {
    if (typeof tool !== 'object' || tool === null)
      return `invalid tool ${describeValue(tool)}: expected a Tool or undefined`;
    const t = tool as { name?: unknown; needsApproval?: unknown; approvalHint?: unknown };
    if (t.name !== name)
      return `the tool ${describeValue(t.name)} is not the one the call names (${JSON.stringify(name)})`;
    const needs = t.needsApproval;
    if (needs !== undefined && typeof needs !== 'boolean' && typeof needs !== 'function') {
      return `invalid needsApproval ${describeValue(needs)} of tool ${JSON.stringify(name)}: expected a boolean or a function`;
    }
    const hint = t.approvalHint;
    if (hint !== undefined && hint !== 'allow' && hint !== 'ask') {
      return `invalid approvalHint ${describeValue(hint)} of tool ${JSON.stringify(name)}: expected 'allow', 'ask' or undefined`;
    }
  }
  if (typeof ctx !== 'object' || ctx === null)
    return `invalid context ${describeValue(ctx)}: expected a ToolContext { toolCallId, abortSignal?, agentId? }`;
  const { toolCallId, agentId } = ctx as { toolCallId?: unknown; agentId?: unknown };
  if (typeof toolCallId !== 'string')
    return `invalid context toolCallId ${describeValue(toolCallId)}: expected a string`;
  if (agentId !== undefined && typeof agentId !== 'string')
    return `invalid context agentId ${describeValue(agentId)}: expected a string or undefined`;
  return undefined;
}
