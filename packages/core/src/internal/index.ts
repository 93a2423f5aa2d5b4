/**
 * `@signalyard/core/internal`: building blocks the Signalyard packages share — an event channel,
 * a push-to-pull stream, abort linking and the one promise-versus-abort race, total
 * error-message extraction, timers and an abortable sleep, a cached ISO clock, plain-value
 * helpers (`isRecord`, `deepFreeze`, `setData`, the one frozen-copy mark with `frozenCopy` and
 * `frozenJsonCopy`), the action check of the route validators, the helpers every config loader
 * uses (size limit, path argument, zod issues as problems, path printing, reserved names), the
 * approval-policy schemas and the helpers every checkpoint store uses. Every module it exports
 * lives under `internal/`; the public modules of core import from here too.
 * Internal: not part of the public API, no stability promise between releases; applications and
 * plugins use the root entry.
 *
 * @packageDocumentation
 */
export { EventChannel } from './event-channel.js';
export type { EventChannelOptions } from './event-channel.js';
export { pushStream } from './push-stream.js';
export { abortedError, isAbortSignal, linkAbort, linkAbortSignals, onAbort, throwIfAborted } from './abort.js';
export { AbortRace, untilAborted } from './abort-race.js';
export { readChatStream } from './read-chat.js';
export { deepFreeze, isRecord, setData } from './values.js';
export { errorCode, errorText } from './error-text.js';
export { MAX_TIMEOUT_MS, clampTimeout, deadline, isTimerDelay, sleep, startTimer } from './timers.js';
export type { Deadline } from './timers.js';
export { actionProblem } from './action-problem.js';
export { checkpointFromRow, isStoredVersion } from './checkpoint-row.js';
export { MAX_CONFIG_CHARS, configSizeProblem } from './config-size.js';
export { configProblemsFromZod, formatConfigPath, sortConfigProblems } from './config-problems.js';
export type { ConfigPosition, ZodProblemOptions } from './config-problems.js';
export { configFilePath } from './config-file.js';
export { isReservedName, reservedNameProblem } from './reserved-names.js';
export {
  assertCheckpointKey,
  assertExpectedVersion,
  serializeCheckpointData,
  storeClosedError,
} from './checkpoint-data.js';
export { frozenJsonValue, isJsonRecord } from './frozen-mark.js';
export { frozenJsonHistory } from './history-link.js';
export { saveAtOnce } from './save-at-once.js';
export { frozenCopy } from './frozen-copy.js';
export { frozenJsonCopy } from './checkpoint-json.js';
export {
  DEFAULT_KEEP_VERSIONS,
  assertCheckpointVersion,
  keepVersionsProblem,
  resolveHistoryOptions,
} from './checkpoint-history.js';
export type { HistoryQuery } from './checkpoint-history.js';
export {
  assertKeyPrefix,
  assertTextCheckpointKey,
  compareCodeUnits,
  keyPrefixRange,
  keyPrefixUpperBound,
  keysWithPrefix,
  unstorableTextIndex,
} from './checkpoint-text.js';
export { clockProblem, isClock, isoAt, isoNow, readClock } from './clock.js';
export {
  approvalPolicyKeys,
  approvalPolicyProblems,
  snakeCaseApprovalPolicySchema,
} from './approval-policy-schemas.js';
export type { PolicySpelling } from './approval-policy-schemas.js';
export { jsonEqual } from './json-equal.js';
export {
  ID_CHARACTERS,
  canonicalId,
  escapeIdChars,
  forbiddenIdIndex,
  hasIdCharactersOnly,
  idCharacterProblem,
  isAsciiSpace,
} from './session-id.js';
export {
  pendingApprovalCount,
  readSessionCheckpoint,
  retireApprovals,
  sessionVersionOf,
} from './session-checkpoint-format.js';
export type { SessionCheckpointRead } from './session-checkpoint-format.js';
export { compareInboxSeq, isInboxSeq } from './inbox-seq.js';
export {
  MAX_INBOX_ID_LENGTH,
  MAX_INBOX_KEY_LENGTH,
  assertAcquire,
  assertAttempt,
  assertEntry,
  assertInboxId,
  assertInboxKey,
  assertLease,
  assertNotice,
  assertOptionalSeq,
  assertTtl,
  checkAccept,
  checkEventsArgs,
  checkLimit,
  checkOutcomeOptions,
  entrySettledError,
  inboxClosedError,
  inboxFullError,
  inboxInputError,
  isPoisonedOutcome,
  leaseLostError,
  outcomeText,
  parseSignalText,
} from './inbox-input.js';
export type { CheckedAccept } from './inbox-input.js';
export {
  DEFAULT_INBOX_LIMITS,
  INBOX_LIMIT_OPTIONS,
  msOptionProblem,
  resolveInboxLimits,
  unknownOptionProblems,
} from './inbox-options.js';
export type { InboxLimits } from './inbox-options.js';
export { InboxWakeups } from './inbox-wakeups.js';
export type { InboxWatch } from './inbox-wakeups.js';
export { readEventLog, turnEventFromText, turnEventText, turnEventTexts, waitForOutcome } from './inbox-streams.js';
export type { EventLogSource, EventPage, EventRow, OutcomeLookup } from './inbox-streams.js';
export { toJsonValue, utf8Length } from './json-safe.js';
export { checkPendingOptions, inboxOutcome, readLeased } from './inbox-methods.js';
export { checkSettle } from './inbox-settle.js';
export { outcomeJsonOnce } from './outcome-json-once.js';
export type { CheckedSettle } from './inbox-settle.js';
export { timeOrderedUuid } from './ordered-uuid.js';
