/**
 * `@signalyard/pipeline`: stages with routing rules, bounds and edge limits, interrupts and
 * resume. `definePipeline` validates a configuration into an immutable `Pipeline`;
 * `PipelineRuntime` runs it and returns an immutable `Envelope` per run.
 *
 * @packageDocumentation
 */
export { definePipeline, Pipeline } from './pipeline.js';
export type { EdgeLimit, PipelineBounds, PipelineConfig } from './pipeline-config.js';
export { DEFAULT_BOUNDS } from './pipeline-config.js';
export type { JoinStrategy, RoutingRule, StageConfig, StageOutput } from './stage-config.js';
export type { StageContext } from './stage-context.js';
export { ruleValuesEqual } from './rule-equality.js';
export { PipelineRuntime } from './pipeline-runtime.js';
export type { PipelineRuntimeOptions, ResumeOptions, RunBounds, RunOptions } from './pipeline-runtime.js';
export { Envelope } from './envelope.js';
export type { EnvelopeJSON, PipelineMode, StageErrorRecord, TraceEntry } from './envelope.js';
export { INTERRUPT_KINDS, isInterruptKind } from './interrupt.js';
export type { Interrupt, InterruptKind, InterruptResponse, ResolvedInterrupt } from './interrupt.js';
export { TERMINAL_REASONS } from './terminal-reason.js';
export type { TerminalReason } from './terminal-reason.js';
export type { PipelineEvent } from './pipeline-event.js';
export { PipelineConfigError } from './pipeline-config-error.js';
export { PipelineStateError } from './pipeline-state-error.js';
export type { PipelineStateErrorCode } from './pipeline-state-error.js';
export { PipelineUsageError } from './pipeline-usage-error.js';
export type { PipelineUsageErrorCode } from './pipeline-usage-error.js';
export { PipelineBoundError } from './pipeline-bound-error.js';
export type { CallBound } from './pipeline-bound-error.js';
export { PipelineStageError } from './pipeline-stage-error.js';
export type { PipelineStageErrorCode } from './pipeline-stage-error.js';
export { Kernel } from './kernel.js';
export type { KernelEventsOptions, KernelOptions, ServiceOptions, SubmitOptions } from './kernel.js';
export type { KernelEvent } from './kernel-event.js';
export { PRIORITIES, isPriority } from './priority.js';
export type { Priority } from './priority.js';
export { PROCESS_TRANSITIONS, canTransition } from './process-state.js';
export type { ProcessState } from './process-state.js';
export type { ProcessHandle, ProcessStatus, ProcessUsage } from './process-status.js';
export type { ResourceQuota } from './resource-quota.js';
export { KernelError } from './kernel-error.js';
export type { KernelErrorCode } from './kernel-error.js';
