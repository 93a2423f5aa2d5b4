/**
 * Limits on one {@link Kernel} process, enforced **while** it runs (across `resume`s). Each is a
 * positive integer (`timeoutMs`: a positive number of milliseconds); absent means no quota.
 *
 * - `maxLlmCalls`, `maxAgentHops`, `maxIterations` reach the run as bounds: the smaller of the
 *   quota and the pipeline's own bound applies. The runtime checks them before each stage and
 *   model call.
 * - `maxToolCalls` bounds what stages report with `ctx.countToolCall(n)`; a count over it throws
 *   inside the stage and ends the run after it.
 * - `timeoutMs` bounds the time the process spends running (not queued, not waiting on an
 *   interrupt): when it passes, the run is aborted.
 *
 * Exceeding one emits a `resource_exhausted` kernel event and terminates the process with
 * `max_llm_calls_exceeded`, `max_agent_hops_exceeded`, `max_iterations_exceeded`,
 * `max_tool_calls_exceeded` or `timeout_exceeded`.
 *
 * @example
 * ```ts
 * kernel.submit(request, { quota: { maxLlmCalls: 5, maxToolCalls: 20, timeoutMs: 30_000 } });
 * ```
 */
export interface ResourceQuota {
  /** Model calls per process. */
  maxLlmCalls?: number;
  /** Tool calls per process (`ctx.countToolCall`). */
  maxToolCalls?: number;
  /** Stage executions per process. */
  maxAgentHops?: number;
  /** Loop-backs per process. */
  maxIterations?: number;
  /** Wall-clock time per process, in milliseconds. */
  timeoutMs?: number;
}

/** Every key of {@link ResourceQuota}. @internal */
export const QUOTA_KEYS: readonly (keyof ResourceQuota)[] = Object.freeze([
  'maxLlmCalls',
  'maxToolCalls',
  'maxAgentHops',
  'maxIterations',
  'timeoutMs',
]);
