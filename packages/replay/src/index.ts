/**
 * `@signalyard/replay`: last week's conversations as this week's regression tests. Cassettes
 * exported from any store (`exportCassettes`) or recorded on purpose (`cassetteRecorder`),
 * replayed offline against today's configuration with no network and no side effects
 * (`replay`), a diff naming the first turn and field where two runs part (`diffRuns`), and
 * evals on top (`evaluate` with scorers). The Vitest helper is `@signalyard/replay/vitest`.
 *
 * @packageDocumentation
 */
export type {
  Cassette,
  CassetteModelCall,
  CassetteSignal,
  CassetteToolResult,
  CassetteTurn,
  PartialReason,
} from './cassette.js';
export { cassetteFileName, cassetteSchema, loadCassettes, parseCassette, saveCassettes } from './cassette-file.js';
export { exportCassettes } from './export-cassettes.js';
export type { ExportCassettesOptions } from './export-cassettes.js';
export { cassetteRecorder } from './cassette-recorder.js';
export type { CassetteRecorder, CassetteRecorderOptions } from './cassette-recorder.js';
export type { Redactor } from './redact-deep.js';
export { canonicalJson, requestHash } from './request-hash.js';
export { replay } from './replay.js';
export type {
  ReplayOptions,
  ReplayReport,
  ReplayRunnerFactory,
  ReplayRunnerParts,
  ReplayStatus,
  ReplayableRunner,
  ReplayedSession,
  ReplayedTurn,
} from './replay.js';
export { diffRuns, diffSummaries } from './diff-runs.js';
export type { Divergence, DivergenceKind, FieldDiff, RunDiff } from './diff-runs.js';
export { evaluate } from './evaluate.js';
export type { EvaluateOptions, EvaluateResult, EvaluatedSession } from './evaluate.js';
export { noMarkersVisible, replyIncludes, sameHandoffs, sameRoute, toolCalledOnce } from './scorers.js';
export type { Score, Scorer, ScorerRun } from './scorers.js';
export { llmJudge } from './llm-judge.js';
export type { LlmJudgeOptions } from './llm-judge.js';
export { ReplayError } from './errors/replay-error.js';
export type { ReplayErrorCode } from './errors/replay-error.js';
