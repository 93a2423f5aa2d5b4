/**
 * `@signalyard/core/testing`: helpers for testing Signalyard code and proving third-party
 * implementations. Does not import any test runner.
 *
 * @packageDocumentation
 */
export { checkpointStoreConformance } from './checkpoint-store-conformance.js';
export type {
  CheckpointConformanceOptions,
  CheckpointStoreFactory,
  ConformanceHarness,
} from './conformance-support.js';
export { scriptedModel } from './scripted-model.js';
export type { ScriptResponder, ScriptStep, ScriptedModel, ScriptedModelOptions } from './scripted-model.js';
export { ScriptedModelError } from '../errors/scripted-model-error.js';
export type { ScriptedModelErrorCode } from '../errors/scripted-model-error.js';
export { inboxConformance } from './inbox-conformance.js';
export type { InboxCase, InboxFactory, InboxFactoryOptions, InboxUnderTest } from './inbox-conformance-support.js';
