/**
 * How a run ended (`envelope.terminalReason`, set whenever `envelope.terminated` is true).
 *
 * The sequential runtime produces `completed` (reached `end`), `stage_failed` (a failure with no
 * `errorNext`), `user_denied` (a confirmation answered without `approved: true`),
 * `user_cancelled` (its `abortSignal` fired), `timeout_exceeded` (the run's `timeoutMs` passed)
 * and the bound reasons `max_iterations_exceeded`, `max_llm_calls_exceeded`,
 * `max_agent_hops_exceeded`, `max_loop_exceeded` (an edge limit) and `max_tool_calls_exceeded`.
 * `unknown_service` and `service_unhealthy` come from the kernel's dispatch.
 */
export type TerminalReason =
  | 'completed'
  | 'stage_failed'
  | 'user_denied'
  | 'user_cancelled'
  | 'max_iterations_exceeded'
  | 'max_llm_calls_exceeded'
  | 'max_agent_hops_exceeded'
  | 'max_tool_calls_exceeded'
  | 'max_loop_exceeded'
  | 'timeout_exceeded'
  | 'unknown_service'
  | 'service_unhealthy';

/** Every {@link TerminalReason}. */
export const TERMINAL_REASONS: readonly TerminalReason[] = Object.freeze([
  'completed',
  'stage_failed',
  'user_denied',
  'user_cancelled',
  'max_iterations_exceeded',
  'max_llm_calls_exceeded',
  'max_agent_hops_exceeded',
  'max_tool_calls_exceeded',
  'max_loop_exceeded',
  'timeout_exceeded',
  'unknown_service',
  'service_unhealthy',
]);
