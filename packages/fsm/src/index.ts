/**
 * `@signalyard/fsm`: the FSM execution strategy — a transition table with priority-ordered,
 * named guards, state-scoped strategy-tier routes, snapshots and Mermaid diagrams.
 *
 * @packageDocumentation
 */
export { FsmStrategy } from './fsm-strategy.js';
export { FsmDefinition, FsmStrategyBuilder } from './fsm-strategy.js';
// eslint-disable-next-line @typescript-eslint/no-deprecated -- the former name stays exported for code written before the fold
export { FsmStrategyWithRoutes } from './fsm-strategy.js';
export type { RouteOptions, StateOptions, TransitionOptions } from './fsm-options.js';
export type { FsmAttempt, GuardRejectedRefusal, InvalidTransitionRefusal, TransitionRefusal } from './fsm-refusal.js';
// eslint-disable-next-line @typescript-eslint/no-deprecated -- the first name of TransitionRefusal stays exported
export type { FsmRefusal } from './fsm-refusal.js';
export { ClosureGuard } from './guard.js';
export type { GuardCondition } from './guard.js';
export { InvalidTransitionError } from './errors/invalid-transition-error.js';
export type { InvalidTransitionErrorCode } from './errors/invalid-transition-error.js';
export { GuardRejectedError } from './errors/guard-rejected-error.js';
export type { GuardRejectedErrorCode } from './errors/guard-rejected-error.js';
export { GuardFailedError } from './errors/guard-failed-error.js';
export type { GuardFailedErrorCode } from './errors/guard-failed-error.js';
export { FsmDefinitionError } from './errors/fsm-definition-error.js';
export type { FsmDefinitionErrorCode } from './errors/fsm-definition-error.js';
export { FsmSnapshotError } from './errors/fsm-snapshot-error.js';
export type { FsmSnapshotErrorCode } from './errors/fsm-snapshot-error.js';
