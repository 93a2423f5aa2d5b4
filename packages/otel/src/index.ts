/**
 * `@signalyard/otel`: a Signalyard plugin that records OpenTelemetry spans — one per signal,
 * with its turn, transitions, crew agents and pipeline stages — from the Runner's events,
 * through `@opentelemetry/api`.
 *
 * @packageDocumentation
 */
export { otelPlugin } from './otel-plugin.js';
export type { OtelPluginOptions } from './otel-plugin.js';
