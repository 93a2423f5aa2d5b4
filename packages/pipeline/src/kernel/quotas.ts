import type { PipelineBounds } from '../definition/pipeline-config.js';
import type { Envelope } from '../envelope/envelope.js';
import type { RunBounds } from '../runtime/runtime-options.js';
import type { ProcessUsage } from './process-status.js';
import type { ResourceQuota } from './resource-quota.js';

// How a process's quota reaches its runs, and what is left of it: pure functions.

/** The quota's bounds as the runtime takes them (each tightens the pipeline's own); `undefined` when none is set. @internal */
export function quotaBounds(quota: Readonly<ResourceQuota>): RunBounds | undefined {
  const bounds: RunBounds = {};
  if (quota.maxLlmCalls !== undefined) bounds.maxLlmCalls = quota.maxLlmCalls;
  if (quota.maxAgentHops !== undefined) bounds.maxAgentHops = quota.maxAgentHops;
  if (quota.maxIterations !== undefined) bounds.maxIterations = quota.maxIterations;
  return Object.keys(bounds).length === 0 ? undefined : bounds;
}

/** A quota exhausted: which, what the process had used of it, and the limit. @internal */
export interface Exhaustion {
  readonly resource: keyof ResourceQuota;
  readonly used: number;
  readonly limit: number;
}

/**
 * The quota that ended a run, if one did (not the pipeline's own bound: when the pipeline's
 * bound is no larger than the quota, the pipeline's limit ended it).
 * @internal
 */
export function exhaustedQuota(
  quota: Readonly<ResourceQuota>,
  pipeline: PipelineBounds,
  envelope: Envelope,
  usage: { readonly toolCalls: number; readonly elapsedMs: number },
): Exhaustion | undefined {
  const q = quota;
  switch (envelope.terminalReason) {
    case 'max_llm_calls_exceeded':
      return q.maxLlmCalls !== undefined && q.maxLlmCalls <= pipeline.maxLlmCalls
        ? { resource: 'maxLlmCalls', used: envelope.llmCalls, limit: q.maxLlmCalls }
        : undefined;
    case 'max_agent_hops_exceeded':
      return q.maxAgentHops !== undefined && q.maxAgentHops <= pipeline.maxAgentHops
        ? { resource: 'maxAgentHops', used: envelope.agentHops, limit: q.maxAgentHops }
        : undefined;
    case 'max_iterations_exceeded':
      return q.maxIterations !== undefined && q.maxIterations <= pipeline.maxIterations
        ? { resource: 'maxIterations', used: envelope.iteration, limit: q.maxIterations }
        : undefined;
    case 'max_tool_calls_exceeded':
      return q.maxToolCalls === undefined
        ? undefined
        : { resource: 'maxToolCalls', used: usage.toolCalls, limit: q.maxToolCalls };
    case 'timeout_exceeded':
      return q.timeoutMs === undefined
        ? undefined
        : { resource: 'timeoutMs', used: usage.elapsedMs, limit: q.timeoutMs };
    default:
      return undefined;
  }
}

/** What remains of each quota set (never below 0). @internal */
export function remainingQuota(quota: Readonly<ResourceQuota>, usage: ProcessUsage): Partial<ResourceQuota> {
  const remaining: Partial<ResourceQuota> = {};
  const q = quota;
  if (q.maxLlmCalls !== undefined) remaining.maxLlmCalls = Math.max(0, q.maxLlmCalls - usage.llmCalls);
  if (q.maxToolCalls !== undefined) remaining.maxToolCalls = Math.max(0, q.maxToolCalls - usage.toolCalls);
  if (q.maxAgentHops !== undefined) remaining.maxAgentHops = Math.max(0, q.maxAgentHops - usage.agentHops);
  if (q.maxIterations !== undefined) remaining.maxIterations = Math.max(0, q.maxIterations - usage.iterations);
  if (q.timeoutMs !== undefined) remaining.timeoutMs = Math.max(0, q.timeoutMs - usage.elapsedMs);
  return remaining;
}
