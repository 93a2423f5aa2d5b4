/**
 * `@signalyard/pipeline`: stages with routing rules, bounds and edge limits, interrupts and
 * resume. `definePipeline` validates a configuration into an immutable `Pipeline`;
 * `PipelineRuntime` runs it and returns an immutable `Envelope` per run; a `Kernel` runs many
 * pipeline runs by priority, within concurrency limits and quotas.
 *
 * @packageDocumentation
 */
export { definePipeline, Pipeline } from './definition/pipeline.js';
export type { EdgeLimit, PipelineBounds, PipelineConfig } from './definition/pipeline-config.js';
export { DEFAULT_BOUNDS } from './definition/pipeline-config.js';
export type { JoinStrategy, RoutingRule, StageConfig, StageOutput } from './definition/stage-config.js';
export type { StageContext } from './definition/stage-context.js';
export { PipelineRuntime } from './runtime/pipeline-runtime.js';
export type { PipelineRuntimeOptions, ResumeOptions, RunBounds, RunOptions } from './runtime/runtime-options.js';
export type { PipelineEvent } from './runtime/pipeline-event.js';
export { Envelope } from './envelope/envelope.js';
export type { EnvelopeJSON, PipelineMode, StageErrorRecord, TraceEntry } from './envelope/envelope-json.js';
export { INTERRUPT_KINDS, isInterruptKind } from './envelope/interrupt.js';
export type { Interrupt, InterruptKind, InterruptResponse, ResolvedInterrupt } from './envelope/interrupt.js';
export { TERMINAL_REASONS } from './envelope/terminal-reason.js';
export type { TerminalReason } from './envelope/terminal-reason.js';
export { Kernel } from './kernel/kernel.js';
export type { KernelEventsOptions, KernelOptions, ServiceOptions, SubmitOptions } from './kernel/kernel-options.js';
export type { KernelEvent } from './kernel/kernel-event.js';
export { PRIORITIES, isPriority } from './kernel/priority.js';
export type { Priority } from './kernel/priority.js';
export type { ProcessState } from './kernel/process-state.js';
export type { ProcessHandle, ProcessStatus, ProcessUsage } from './kernel/process-status.js';
export type { ResourceQuota } from './kernel/resource-quota.js';
export { PipelineConfigError } from './errors/pipeline-config-error.js';
export type { PipelineConfigErrorCode } from './errors/pipeline-config-error.js';
export { PipelineStateError } from './errors/pipeline-state-error.js';
export type { PipelineStateErrorCode } from './errors/pipeline-state-error.js';
export { PipelineUsageError } from './errors/pipeline-usage-error.js';
export type { PipelineUsageErrorCode } from './errors/pipeline-usage-error.js';
export { PipelineBoundError } from './errors/pipeline-bound-error.js';
export type { CallBound, PipelineBoundErrorCode } from './errors/pipeline-bound-error.js';
export { PipelineStageError } from './errors/pipeline-stage-error.js';
export type { PipelineStageErrorCode } from './errors/pipeline-stage-error.js';
export { KernelError } from './errors/kernel-error.js';
export type { KernelErrorCode } from './errors/kernel-error.js';
