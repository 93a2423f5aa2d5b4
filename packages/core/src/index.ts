/**
 * `@signalyard/core`: the types every Signalyard package, plugin and store shares — signals,
 * actions, routes, the Plugin interface, execution strategies, errors, checkpoint stores and
 * the model interface.
 *
 * @packageDocumentation
 */
export { SignalKind, describeValue, isSignalKind, signal } from './signal.js';
export type { Signal } from './signal.js';
export { Action, formatAction, isAction } from './action.js';
export type { ActionType } from './action.js';
export type { ConsideredRoute, RouteContext, RouteOutcome, SignalRoute, Tier } from './route.js';
export type { CustomActionHandler, Plugin, PluginContext } from './plugin.js';
export type { EngineEvent, Outcome, OutcomeStatus, RunnerEvent } from './runner-event.js';
export type { TimelineEntry, TimelineEvent } from './timeline-entry.js';
export type { AgentDescription, AgentDiagrams, DescribedRoute, RunnerDescription } from './runner-description.js';
export type {
  ExecutionStrategy,
  StrategyRefusal,
  StrategySnapshot,
  TransitionAttempt,
  TransitionResult,
} from './execution-strategy.js';
export { DirectStrategy } from './direct-strategy.js';
export { systemClock } from './clock.js';
export type { Clock } from './clock.js';
export { SignalyardError, hasErrorMarker, isSignalyardError } from './errors/signalyard-error.js';
export type { SignalyardErrorOptions } from './errors/signalyard-error.js';
export { isTransitionRefusal, transitionRefusal } from './errors/transition-refusal.js';
export { AbortedError } from './errors/aborted-error.js';
export type { AbortedErrorCode } from './errors/aborted-error.js';
export { ConfigError } from './errors/config-error.js';
export type { ConfigErrorCode, ConfigProblem } from './errors/config-error.js';
export { InvalidArgumentError } from './errors/invalid-argument-error.js';
export type { InvalidArgumentErrorCode } from './errors/invalid-argument-error.js';
export { CheckpointConflictError } from './errors/checkpoint-conflict-error.js';
export type { CheckpointConflictErrorCode } from './errors/checkpoint-conflict-error.js';
export { CheckpointDataError } from './errors/checkpoint-data-error.js';
export type { CheckpointDataErrorCode } from './errors/checkpoint-data-error.js';
export { CheckpointStoreError } from './errors/checkpoint-store-error.js';
export type { CheckpointStoreErrorCode } from './errors/checkpoint-store-error.js';
export type { Checkpoint, CheckpointStore, SessionLock } from './checkpoint-store.js';
export { MemoryCheckpointStore } from './memory-checkpoint-store.js';
export type { MemoryCheckpointStoreOptions } from './memory-checkpoint-store.js';
export type {
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatStreamPart,
  McpToolSource,
  McpToolView,
  Tool,
  ToolCall,
  ToolContext,
  ToolProgress,
  ToolSpec,
} from './model.js';
export type { TextSource, TranscriptEntry, TurnEvent } from './turn-event.js';
export type {
  ApprovalDecision,
  ApprovalDecisionKind,
  ApprovalPolicy,
  ApprovalRule,
  ArgCondition,
  JsonValue,
  PendingApproval,
} from './approval.js';
export type {
  ApprovalSummary,
  HandoffSummary,
  RunSummary,
  RunSummaryPart,
  ToolCallSummary,
  SessionCause,
  SessionCheckpointV1,
  SessionVersion,
} from './session-checkpoint.js';
export { defineTool } from './define-tool.js';
export type { ToolDefinition } from './define-tool.js';
export { ToolArgumentsError } from './errors/tool-arguments-error.js';
export type { ToolArgumentIssue, ToolArgumentsErrorCode } from './errors/tool-arguments-error.js';
export { streamChat } from './stream-chat.js';
export { ModelStreamError } from './errors/model-stream-error.js';
export type { ModelStreamErrorCode } from './errors/model-stream-error.js';
export { approvalPolicySchema, parseApprovalPolicy } from './approval-policy-schema.js';
export { decideApproval } from './decide-approval.js';
export type { ApprovalVerdict } from './decide-approval.js';
export type {
  AcceptOptions,
  Inbox,
  InboxAcceptEntry,
  InboxDeadLetter,
  InboxEntry,
  InboxLease,
  InboxLeaseInfo,
  InboxNotice,
  InboxReceipt,
  InboxSettleEvents,
  InboxStreamEvent,
  InboxStreamRef,
  InspectableInbox,
  SignalJson,
} from './inbox.js';
export { InboxError } from './errors/inbox-error.js';
export type { InboxErrorCode } from './errors/inbox-error.js';
export {
  DEFAULT_MAX_OUTCOME_BYTES,
  outcomeFromJson,
  outcomeToJson,
  signalyardErrorFromJson,
  signalyardErrorToJson,
} from './outcome-json.js';
export type { OutcomeJson, SignalyardErrorJson, TruncatedOutput } from './outcome-json.js';
export { MemoryInbox } from './memory-inbox.js';
export type { MemoryInboxOptions } from './memory-inbox-options.js';
