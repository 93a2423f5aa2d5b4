/**
 * `@signalyard/inspector`: a local web page that shows every decision of a Signalyard Runner —
 * its sessions, each signal's route decision (tier, route), FSM transitions, crew handoffs and
 * tool calls, pipeline stages, approvals with Approve / Deny, outcomes with durations, the chat,
 * the versions kept in the store with "fork from here", and the agents' diagrams — live from a
 * runner (Server-Sent Events), or offline from a checkpoint store. No CDN, no network: the page
 * ships in the package.
 *
 * @packageDocumentation
 */
export { startInspector } from './start-inspector.js';
export type { Inspector } from './start-inspector.js';
export type { InspectorOptions } from './inspector-options.js';
export type { InspectorInbox } from './inspector-inbox.js';
export type { InspectableRunner, InspectedListing, InspectedSession } from './inspectable-runner.js';
export type { AgentDiagrams } from './diagrams.js';
export { highlightFsmState } from './diagrams.js';
export { InspectorError } from './errors/inspector-error.js';
export type { InspectorErrorCode } from './errors/inspector-error.js';
