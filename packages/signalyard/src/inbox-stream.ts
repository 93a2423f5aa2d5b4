import { InboxError, describeValue, type Inbox, type InboxStreamRef, type Outcome } from '@signalyard/core';
import { errorText, linkAbortSignals } from '@signalyard/core/internal';
import type { InboxProducer } from './inbox-producer.js';
import { inputError } from './outcomes.js';
import { canonicalKey } from './runner-input.js';
import { QuietEnd, type TurnSink, type TurnStreamControl } from './turn-stream.js';

/** What reading a receipt's stream log into a turn stream needs. @internal */
export interface RelayDeps {
  readonly inbox: Inbox;
  readonly producer: InboxProducer;
  readonly warn: (message: string) => void;
}

/**
 * The events a worker published for `receiptId` (inbox.md "Streams from any worker"), into
 * `sink` as they come — each with its offset, events of older attempts dropped by the inbox,
 * `restarted` passed on — and the entry's outcome last: the live one when this process settled
 * it, else rebuilt from the inbox. The outcome waits for the log to be read through (its
 * `outcome` event, or the receipt leaving the inbox), so the stream ends as a local one does:
 * after every event of the turn. `abortSignal` (the caller's) ends only the wait, with `ABORTED`;
 * a stream closed by its readers stops reading the log and still resolves with the outcome.
 * @internal
 */
export async function relayReceipt(
  d: RelayDeps,
  receiptId: string,
  abortSignal: AbortSignal | undefined,
  sink: TurnSink,
  control: TurnStreamControl | undefined,
): Promise<Outcome> {
  control?.setReceipt(receiptId);
  const outcome = d.producer.outcome(receiptId, abortSignal === undefined ? {} : { abortSignal });
  outcome.catch(() => undefined); // awaited below, after the log
  const read = linkAbortSignals(abortSignal, control?.closed);
  let offset: string | undefined;
  try {
    for await (const item of d.inbox.events({ receiptId }, read === undefined ? {} : { abortSignal: read })) {
      if (item.event.type === 'outcome') {
        offset = item.offset;
        break;
      }
      sink(item.event, item.offset);
    }
  } catch (error) {
    if (abortSignal?.aborted === true) throw error;
    if (control?.closed.aborted !== true) {
      d.warn(`stream of receipt ${JSON.stringify(receiptId)}: reading its events failed: ${errorText(error)}`);
    }
  }
  const settled = await outcome;
  sink({ type: 'outcome', outcome: settled }, offset);
  return settled;
}

/**
 * `Runner.resumeStream`: a receipt's stream log after `from` (or the session's latest in-flight
 * receipt from the first event of its latest attempt), into `sink`, ending after the `outcome`
 * event. When the log ends without one (nothing in flight, or the receipt left the inbox), the
 * stream ends at once: for a receipt its outcome is fetched (`OUTCOME_EXPIRED` once gone), for a
 * session `outcome` rejects with `OUTCOME_EXPIRED` — the iteration itself ends without error.
 * @internal
 */
export async function resumeFromLog(
  d: RelayDeps,
  ref: InboxStreamRef,
  from: string | undefined,
  abortSignal: AbortSignal | undefined,
  sink: TurnSink,
  control: TurnStreamControl,
): Promise<Outcome> {
  const receiptId = 'receiptId' in ref ? ref.receiptId : undefined;
  if (receiptId !== undefined) control.setReceipt(receiptId);
  const read = linkAbortSignals(abortSignal, control.closed);
  const opts = {
    ...(from !== undefined && { from }),
    ...(read !== undefined && { abortSignal: read }),
  };
  for await (const item of d.inbox.events(ref, opts)) {
    sink(item.event, item.offset);
    if (item.event.type === 'outcome') return item.event.outcome;
  }
  if (control.closed.aborted) throw new QuietEnd(nothingInFlight(ref));
  if (receiptId === undefined) throw new QuietEnd(nothingInFlight(ref));
  let outcome: Outcome;
  try {
    outcome = await d.producer.outcome(receiptId, abortSignal === undefined ? {} : { abortSignal });
  } catch (error) {
    throw new QuietEnd(error);
  }
  sink({ type: 'outcome', outcome });
  return outcome;
}

/** `OUTCOME_EXPIRED`: a resumed stream found nothing to read (its `outcome` rejects with it). */
function nothingInFlight(ref: InboxStreamRef): InboxError {
  const what =
    'receiptId' in ref
      ? `receipt ${JSON.stringify(ref.receiptId)} has no stream left to read`
      : `session ${JSON.stringify(ref.sessionKey)} has no receipt in flight`;
  return new InboxError({
    code: 'OUTCOME_EXPIRED',
    message: `resumeStream(): ${what}; the stream ended at once (read the session's transcript, or runner.outcome(receiptId))`,
    ...('sessionKey' in ref && { sessionKey: ref.sessionKey }),
    ...('receiptId' in ref && { receiptId: ref.receiptId }),
  });
}

/**
 * `resumeStream`'s reference, checked: `{ receiptId }` (a non-empty string) or `{ sessionKey }`
 * (canonicalised), exactly one; `from` only with a receipt id.
 * @throws RunnerError `RUNNER_INPUT_INVALID`.
 * @internal
 */
export function streamRef(ref: unknown, from: string | undefined): InboxStreamRef {
  const shape = '{ receiptId: string } or { sessionKey: string }';
  if (typeof ref !== 'object' || ref === null) {
    throw inputError(`resumeStream() needs ${shape}, got ${describeValue(ref)}`);
  }
  const { receiptId, sessionKey } = ref as { receiptId?: unknown; sessionKey?: unknown };
  if (receiptId !== undefined && sessionKey !== undefined) {
    throw inputError(`resumeStream() needs ${shape} (not both), got ${describeValue(ref)}`);
  }
  if (receiptId !== undefined) {
    if (typeof receiptId !== 'string' || receiptId === '') {
      throw inputError(`resumeStream() needs a receipt id (a non-empty string), got ${describeValue(receiptId)}`);
    }
    return { receiptId };
  }
  if (sessionKey === undefined) throw inputError(`resumeStream() needs ${shape}, got ${describeValue(ref)}`);
  if (from !== undefined) {
    throw inputError(
      `resumeStream({ sessionKey }) serves the latest attempt from its start: from applies to { receiptId } only, got from ${describeValue(from)}`,
    );
  }
  return { sessionKey: canonicalKey(sessionKey as string).key };
}
