import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.UIMessageError');

/** The codes of {@link UIMessageError}. */
export type UIMessageErrorCode =
  /** `toUIMessageStream` or `toUIMessageStreamResponse` was given a turn that is not an async iterable of `TurnEvent`s, `resumeUIMessageStream` or `resumeUIMessageStreamResponse` a runner without `resumeStream` or an empty or non-string session key, or any of them options that are not an object, an empty or non-string `messageId`, a non-boolean `sendRouting` or `includeSignals`, or (for `toUIMessageStream` and `resumeUIMessageStream`) an unknown option; nothing was read from the turn. Fix: pass the `TurnStream` of `runner.stream(...)` (or the `Runner` and the chat's session key) and options as the message describes. */
  | 'UI_STREAM_ARGUMENT_INVALID'
  /** `transcriptToUIMessages` was given something that is not a list of `TranscriptEntry`s: an entry of unknown `type`, a missing or non-string field (a handoff's `group` too), a tool entry with an unknown `status` or a pending approval without `approvalId`. Fix: pass what `runner.transcript(sessionKey)` returned, unchanged. */
  | 'UI_TRANSCRIPT_INVALID'
  /** `approvalsFromUIMessages` was given something that is not a list of AI SDK `UIMessage`s, or a responded tool approval without a string `approval.id` and a boolean `approval.approved` (or with a non-string `reason`), or two responses for one approval id. Fix: pass the `messages` the AI SDK client sent (`useChat` / `Chat`), after `addToolApprovalResponse`. */
  | 'UI_MESSAGES_INVALID';

const SUBJECT: Readonly<Record<UIMessageErrorCode, string>> = {
  UI_STREAM_ARGUMENT_INVALID: 'Invalid argument to the UI message stream',
  UI_TRANSCRIPT_INVALID: 'Invalid transcript',
  UI_MESSAGES_INVALID: 'Invalid UI messages',
};

/**
 * Bad input to the AI SDK UI helpers of `@signalyard/ai-sdk`: a turn or options
 * `toUIMessageStream` cannot take (`UI_STREAM_ARGUMENT_INVALID`), a malformed transcript
 * (`UI_TRANSCRIPT_INVALID`), or messages `approvalsFromUIMessages` cannot read
 * (`UI_MESSAGES_INVALID`). `path` names the bad value; the message says what was expected.
 *
 * @example
 * ```ts
 * try {
 *   decisions = approvalsFromUIMessages(body.messages);
 * } catch (error) {
 *   if (UIMessageError.isInstance(error)) return new Response(error.message, { status: 400 });
 *   throw error;
 * }
 * ```
 */
export class UIMessageError extends SignalyardError<UIMessageErrorCode> {
  private readonly [marker] = true;
  /** Where the problem is, e.g. `messages[3].parts[1].approval.approved` or `opts.messageId` (`''` for the argument itself). */
  readonly path: string;

  constructor(options: { code: UIMessageErrorCode; path: string; problem: string }) {
    super({
      code: options.code,
      message: `${SUBJECT[options.code]}${options.path === '' ? '' : ` at ${options.path}`}: ${options.problem}`,
    });
    this.path = options.path;
  }

  /** True when `error` is a `UIMessageError` (or a subclass), from any installed copy of the package. */
  static override isInstance(error: unknown): error is UIMessageError {
    return hasErrorMarker(error, marker);
  }
}
