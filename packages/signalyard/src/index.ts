/**
 * `signalyard`: the meta-package. The `Runner` that wires route resolution, per-session
 * strategies, the three-tier router, engines and checkpoints into one agent runtime, plus the
 * public API of `@signalyard/core`, `router`, `fsm`, `sessions`, `crew` and `pipeline`,
 * re-exported by name (the stores, model adapters, tracing and the CLI are installed separately).
 *
 * @packageDocumentation
 */
export { createRunner } from './runner.js';
export type { InboundMessage, Runner, SessionView } from './runner.js';
export type { RunnerOptions } from './runner-options.js';
export type { AgentDefinition, Engine, EngineFn, TurnContext, TurnResult } from './engine.js';
export { RunnerError } from './errors/runner-error.js';
export type { SessionCheckpointV1 } from './checkpoint-format.js';
export { crewEngine } from './crew-engine.js';
export type { CrewEngineOptions } from './crew-engine.js';
export { defaultInterruptResponse, pipelineEngine } from './pipeline-engine.js';
export type { PipelineEngineOptions } from './pipeline-engine.js';
export { rateLimitPlugin } from './rate-limit-plugin.js';
export type { RateLimitOptions } from './rate-limit-plugin.js';
export { auditLogPlugin } from './audit-log-plugin.js';
export type { AuditEntry } from './audit-log-plugin.js';

// The public API of every core package, by name. Generated: run
// `python3 scripts/gen-reexports.py --write packages/signalyard/src/index.ts core router fsm sessions crew pipeline`
// after changing a package's exports (test/reexports.test.ts checks nothing is missing).
// <re-exports>
export {
  AbortedError,
  Action,
  CheckpointConflictError,
  CheckpointDataError,
  ConfigError,
  DirectStrategy,
  MemoryCheckpointStore,
  SignalKind,
  SignalyardError,
  ToolArgumentsError,
  actionProblem,
  assertCheckpointKey,
  assertExpectedVersion,
  assertTextCheckpointKey,
  compareCodeUnits,
  defineTool,
  describeValue,
  formatAction,
  hasErrorMarker,
  isAction,
  isSignalKind,
  isSignalyardError,
  keyPrefixUpperBound,
  serializeCheckpointData,
  signal,
  storeClosedError,
  unstorableTextIndex,
} from '@signalyard/core';
export type {
  ActionType,
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  Checkpoint,
  CheckpointStore,
  ConfigProblem,
  CustomActionHandler,
  EngineEvent,
  ExecutionStrategy,
  Outcome,
  OutcomeStatus,
  Plugin,
  PluginContext,
  RouteContext,
  RunnerEvent,
  SessionLock,
  Signal,
  SignalRoute,
  SignalyardErrorOptions,
  StrategySnapshot,
  Tier,
  Tool,
  ToolArgumentIssue,
  ToolCall,
  ToolContext,
  ToolDefinition,
  ToolSpec,
  TransitionResult,
} from '@signalyard/core';
export { ComposedRouter, RouteConfigError, RoutePredicateError } from '@signalyard/router';
export type {
  ComposeParts,
  ConsideredRoute,
  RouteDecision,
  RouteMatch,
  RouteOutcome,
  RouteProblem,
  TierRoutes,
} from '@signalyard/router';
export {
  ClosureGuard,
  FsmDefinition,
  FsmDefinitionError,
  FsmSnapshotError,
  FsmStrategy,
  FsmStrategyBuilder,
  FsmStrategyWithRoutes,
  GuardFailedError,
  GuardRejectedError,
  InvalidTransitionError,
} from '@signalyard/fsm';
export type { GuardCondition, RouteOptions, StateOptions, TransitionOptions } from '@signalyard/fsm';
export {
  MAX_AGENT_ID_LENGTH,
  MAX_SESSION_KEY_LENGTH,
  MAX_SUBAGENT_DEPTH,
  RouteResolver,
  SessionKey,
  SessionKeyError,
  agentIdOf,
  formatSessionKey,
  loadRoutingConfig,
  normalizeAgentId,
  parseRoutingConfig,
  parseSessionKey,
  resolveLinkedPeerId,
  resolveRoute,
  routingConfigSchema,
  routingTomlKeyPaths,
} from '@signalyard/sessions';
export type {
  DeepPartial,
  DirectMessageOptions,
  DmScope,
  GroupOptions,
  InboundPeerKind,
  InboundRoute,
  LinkLookupOptions,
  MatchRule,
  MatchedBy,
  PeerKind,
  PeerRef,
  ResolvedRoute,
  RouteBinding,
  RoutingConfig,
  RoutingConfigInput,
  SessionConfig,
  SessionKeyFactories,
  TaskType,
} from '@signalyard/sessions';
export {
  CrewExecutor,
  CrewRunError,
  DEFAULT_CREW_SETTINGS,
  SignalMatcher,
  crewConfigKeyPaths,
  crewConfigSchema,
  isValidSignal,
  loadCrewConfig,
  matchLevel,
  parseCrewConfig,
  resolveCrewConfig,
  signalMatches,
} from '@signalyard/crew';
export type {
  AgentBehavior,
  CrewAgentConfig,
  CrewAgentInput,
  CrewConfig,
  CrewConfigInput,
  CrewEndReason,
  CrewEvent,
  CrewExecutorOptions,
  CrewResponse,
  CrewRouting,
  CrewRunErrorCode,
  CrewRunOptions,
  CrewSettings,
  CrewState,
  MatchLevel,
  ParallelGroupConfig,
  ParallelGroupInput,
  ParallelMemberStatus,
  ParseCrewConfigOptions,
  RoutingSignal,
} from '@signalyard/crew';
export {
  DEFAULT_BOUNDS,
  Envelope,
  INTERRUPT_KINDS,
  Kernel,
  KernelError,
  PRIORITIES,
  PROCESS_TRANSITIONS,
  Pipeline,
  PipelineBoundError,
  PipelineConfigError,
  PipelineRuntime,
  PipelineStageError,
  PipelineStateError,
  PipelineUsageError,
  TERMINAL_REASONS,
  canTransition,
  definePipeline,
  isInterruptKind,
  isPriority,
  ruleValuesEqual,
} from '@signalyard/pipeline';
export type {
  CallBound,
  EdgeLimit,
  EnvelopeJSON,
  Interrupt,
  InterruptKind,
  InterruptResponse,
  JoinStrategy,
  KernelErrorCode,
  KernelEvent,
  KernelEventsOptions,
  KernelOptions,
  PipelineBounds,
  PipelineConfig,
  PipelineEvent,
  PipelineMode,
  PipelineRuntimeOptions,
  PipelineStageErrorCode,
  PipelineStateErrorCode,
  PipelineUsageErrorCode,
  Priority,
  ProcessHandle,
  ProcessState,
  ProcessStatus,
  ProcessUsage,
  ResolvedInterrupt,
  ResourceQuota,
  ResumeOptions,
  RoutingRule,
  RunBounds,
  RunOptions,
  ServiceOptions,
  StageConfig,
  StageContext,
  StageErrorRecord,
  StageOutput,
  SubmitOptions,
  TerminalReason,
  TraceEntry,
} from '@signalyard/pipeline';
// </re-exports>
