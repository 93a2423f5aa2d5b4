import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PipelineStateError');

/** The codes of {@link PipelineStateError}. */
export type PipelineStateErrorCode =
  /** `resume` / `resumeStream` was given an envelope that is not paused on an interrupt (it completed, was terminated, or was never interrupted). Fix: resume only an envelope whose `interrupt` is set; start a new run otherwise. */
  | 'NO_PENDING_INTERRUPT'
  /** The pending interrupt's `expiresAt` (its `createdAt` plus the pipeline's `interruptTtlMs` for its kind) has passed; the envelope stays as it was. Fix: start a new run, or raise `interruptTtlMs` for that kind. */
  | 'INTERRUPT_EXPIRED';

/**
 * An envelope is not in a state that allows what was asked of it (see
 * {@link PipelineStateErrorCode}).
 *
 * @example
 * ```ts
 * try {
 *   envelope = await runtime.resume(envelope, { text: 'the blue one' });
 * } catch (error) {
 *   if (PipelineStateError.isInstance(error) && error.code === 'INTERRUPT_EXPIRED') startOver();
 *   else throw error;
 * }
 * ```
 */
export class PipelineStateError extends SignalyardError<PipelineStateErrorCode> {
  private readonly [marker] = true;
  /** The id of the envelope concerned. */
  readonly envelopeId: string;
  /** The pending interrupt's id (for `INTERRUPT_EXPIRED`). */
  readonly interruptId?: string;
  /** When the pending interrupt expired (for `INTERRUPT_EXPIRED`), as an ISO 8601 string. */
  readonly expiresAt?: string;

  constructor(options: {
    code: PipelineStateErrorCode;
    message: string;
    envelopeId: string;
    interruptId?: string;
    expiresAt?: string;
  }) {
    super({ code: options.code, message: options.message });
    this.envelopeId = options.envelopeId;
    if (options.interruptId !== undefined) this.interruptId = options.interruptId;
    if (options.expiresAt !== undefined) this.expiresAt = options.expiresAt;
  }

  /** True when `error` is a `PipelineStateError` (or a subclass), from any installed copy of the pipeline package. */
  static override isInstance(error: unknown): error is PipelineStateError {
    return hasErrorMarker(error, marker);
  }
}
