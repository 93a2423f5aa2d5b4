/**
 * `@signalyard/crew`: agents that hand off to each other through text markers in their model
 * replies, or through transfer tools generated from those markers (`handoff_mode: tool`) —
 * signal matching, the crew.yaml configuration, the `CrewExecutor` that runs a crew, and the
 * crew's graph (`buildCrewGraph`, drawn by `crewGraphMermaid`).
 *
 * @packageDocumentation
 */
export { isValidSignal, matchLevel, signalMatches } from './signal-matching.js';
export type { MatchLevel } from './signal-matching.js';
export { SignalMatcher } from './signal-matcher.js';
export { DEFAULT_CREW_SETTINGS } from './crew-config.js';
export type {
  AgentBehavior,
  CrewAgentConfig,
  CrewAgentInput,
  CrewConfig,
  CrewConfigInput,
  CrewRouting,
  CrewSettings,
  HandoffMode,
  ParallelGroupConfig,
  ParallelGroupInput,
  ResumeAt,
  RoutingSignal,
} from './crew-config.js';
export { crewConfigSchema } from './crew-config-schema.js';
export { loadCrewConfig, parseCrewConfig } from './parse-crew-config.js';
export type { ParseCrewConfigOptions } from './parse-crew-config.js';
export { resolveCrewConfig } from './resolve-crew-config.js';
export { buildCrewGraph } from './crew-graph.js';
export type { CrewGraph, CrewGraphAgent, CrewGraphEdge, CrewGraphGroup, CrewGraphTermination } from './crew-graph.js';
export { crewGraphMermaid } from './crew-graph-mermaid.js';
export { CrewExecutor } from './crew-executor.js';
export type { CrewExecutorOptions } from './crew-executor.js';
export type { CrewEndReason, CrewEvent, CrewResponse, CrewRunOptions, ParallelMemberStatus } from './crew-events.js';
export type { CrewApprovalState, CrewBatchCall, CrewRunProgress, CrewState, CrewToolBatch } from './crew-state.js';
export { CrewRunError } from './errors/crew-run-error.js';
export type { CrewRunErrorCode } from './errors/crew-run-error.js';
export { CrewAgentError } from './errors/crew-agent-error.js';
export type { CrewAgentErrorCode } from './errors/crew-agent-error.js';
export { CrewToolError } from './errors/crew-tool-error.js';
export type { CrewToolErrorCode } from './errors/crew-tool-error.js';
export { CrewArgumentError } from './errors/crew-argument-error.js';
export type { CrewArgumentErrorCode } from './errors/crew-argument-error.js';
