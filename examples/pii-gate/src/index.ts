/**
 * `signalyard-plugin-pii-gate`: an example of a third-party Signalyard plugin. It depends on
 * `@signalyard/core` only (as a peer dependency), like any plugin published outside the project.
 *
 * @packageDocumentation
 */
export { piiGatePlugin } from './pii-gate-plugin.js';
export type { PiiGateOptions, RedactedMessage } from './pii-gate-plugin.js';
export { cardNumber, email, luhnValid, phone, redact, secretToken } from './detectors.js';
export type { Detector, Finding } from './detectors.js';
