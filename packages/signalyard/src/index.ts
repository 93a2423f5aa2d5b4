/**
 * `signalyard`: the meta-package. The `Runner` that wires route resolution, per-session
 * strategies, the three-tier router, engines and checkpoints into one agent runtime, plus the
 * public API of `@signalyard/core`, `router`, `fsm`, `sessions`, `crew` and `pipeline`,
 * re-exported whole (the stores, model adapters, tracing and the CLI are installed separately).
 *
 * @packageDocumentation
 */
export { createRunner } from './runner.js';
export type { InboundMessage, Runner } from './runner-api.js';
export type { SessionView } from './session-view.js';
export {
  findSessionVersion,
  forkSession,
  listSessionCheckpoints,
  prepareFork,
  readSessionData,
  readSessionVersion,
  rewindSession,
  saveFork,
} from './session-history.js';
export type {
  ReopenOptions,
  SessionHistoryFailure,
  SessionHistoryResult,
  SessionVersionRead,
  StoredSession,
  WrittenVersion,
} from './session-history.js';
export type { ToolApprovalPayload } from './approvals.js';
export type { TurnStream } from './turn-stream.js';
export type { RunnerOptions, RunnerWorkerOptions } from './runner-options.js';
export type { AgentDefinition, Engine, EngineFn, TurnContext, TurnResult, WhenBusy } from './engine.js';
export { RunnerError } from './errors/runner-error.js';
export type { RunnerErrorCode } from './errors/runner-error.js';
export { crewEngine } from './crew-engine.js';
export type { CrewEngineOptions } from './crew-engine.js';
export { defaultInterruptResponse, pipelineEngine } from './pipeline-engine.js';
export type { PipelineEngineOptions } from './pipeline-engine.js';
export { rateLimitPlugin } from './rate-limit-plugin.js';
export type { RateLimitOptions } from './rate-limit-plugin.js';
export { auditLogPlugin } from './audit-log-plugin.js';
export type { AuditEntry } from './audit-log-plugin.js';

// The public API of every package the meta-package wires together: their whole public entries.
export * from '@signalyard/core';
export * from '@signalyard/router';
export * from '@signalyard/fsm';
export * from '@signalyard/sessions';
export * from '@signalyard/crew';
export * from '@signalyard/pipeline';
