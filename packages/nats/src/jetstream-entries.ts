import type { InboxEntry, InboxReceipt } from '@signalyard/core';
import { parseSignalText } from '@signalyard/core/internal';
import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { parseReceiptId, receiptIdOf } from './jetstream-names.js';

/** An entry's message body: its fields, then its signal's JSON text. @internal */
export interface EntryBody {
  /** The session key. */
  readonly k: string;
  /** The receipt's uuid (the receipt id is `<seq>-<uuid>`). */
  readonly r: string;
  /** `acceptedAt`. */
  readonly at: string;
  readonly a?: string;
  readonly c?: InboxEntry['control'];
}

/** The message body of an entry: one JSON line of fields, a newline, the signal's JSON text. @internal */
export function entryBody(fields: EntryBody, signalText: string): string {
  return `${JSON.stringify(fields)}\n${signalText}`;
}

function splitBody(message: StoredMsg): { fields: EntryBody; signalText: string } {
  const text = message.string();
  const cut = text.indexOf('\n');
  return { fields: JSON.parse(text.slice(0, cut)) as EntryBody, signalText: text.slice(cut + 1) };
}

/** The receipt of a stored entry message. @internal */
export function receiptOfMessage(message: StoredMsg): InboxReceipt {
  const { fields } = splitBody(message);
  return {
    receiptId: receiptIdOf(message.seq, fields.r),
    sessionKey: fields.k,
    seq: String(message.seq),
    acceptedAt: fields.at,
  };
}

/** The entry of a stored entry message, with its delivery count. @internal */
export function entryOfMessage(message: StoredMsg, attempts: number): InboxEntry {
  const { fields, signalText } = splitBody(message);
  return {
    receiptId: receiptIdOf(message.seq, fields.r),
    sessionKey: fields.k,
    seq: String(message.seq),
    acceptedAt: fields.at,
    signal: parseSignalText(signalText),
    attempts,
    ...(fields.a !== undefined && { agentId: fields.a }),
    ...(fields.c !== undefined && { control: fields.c }),
  };
}

/** The session key of a stored entry message. @internal */
export function keyOfMessage(message: StoredMsg): string {
  return splitBody(message).fields.k;
}

/**
 * The stored entry of a receipt id while it is in the stream (not acknowledged), or `undefined`
 * (acknowledged, or not a receipt of this stream). Asked of the stream's leader (not a direct
 * get, which a lagging replica of a clustered stream may answer): "gone" decides `LEASE_LOST`
 * and `OUTCOME_EXPIRED`, so it must not be a replica's lag.
 * @internal
 */
export async function storedEntry(
  jsm: JetStreamManager,
  stream: string,
  receiptId: string,
): Promise<StoredMsg | undefined> {
  const parsed = parseReceiptId(receiptId);
  if (parsed === undefined) return undefined;
  const message = await jsm.streams.getMessage(stream, { seq: parsed.seq });
  if (message === null || splitBody(message).fields.r !== parsed.uuid) return undefined;
  return message;
}

/**
 * The messages on `subject` from stream sequence `from` on, in order, at most `limit`: a key's
 * entries (its subject), or a receipt's events. Direct gets by subject, one message each.
 * @internal
 */
export async function messagesOn(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
  from: number,
  limit: number,
): Promise<StoredMsg[]> {
  const out: StoredMsg[] = [];
  let seq = from;
  while (out.length < limit) {
    const message = await jsm.direct.getMessage(stream, { next_by_subj: subject, seq });
    if (message === null) break;
    out.push(message);
    seq = message.seq + 1;
  }
  return out;
}
