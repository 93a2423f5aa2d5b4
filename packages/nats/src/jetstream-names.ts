import { createHash } from 'node:crypto';

/** The names one {@link JetStreamInbox} uses on the server, all derived from its `stream` option. @internal */
export interface JetStreamNames {
  /** The entries stream (work-queue retention): subjects `<stream>.p<n>.<keyhash>`. */
  readonly stream: string;
  /** The stream of turn events, one subject per entry: `<stream>_EVENTS.<seq>`. */
  readonly events: string;
  /** The core subject of `notify` notices (not stored). */
  readonly notices: string;
  /** The core subject that wakes `outcome()` and `events()` waiters: an outcome was put or an entry acknowledged (not stored). */
  readonly settled: string;
  /** The KV bucket of partition leases (`max_age` = `leaseMs`). */
  readonly leases: string;
  /** The KV bucket of outcomes (`max_age` = `outcomeTtlMs`). */
  readonly outcomes: string;
  /** The KV bucket of dead letters (`max_age` = `outcomeTtlMs`). */
  readonly dead: string;
  /** The KV bucket of delivery counts, per entry (removed on `ack`). */
  readonly attempts: string;
  /** The KV bucket of settled entries' receipts by dedupe id (`max_age` = `dedupeWindowMs`). */
  readonly receipts: string;
  /** The durable pull consumer of partition `n`. */
  consumer(n: number): string;
  /** The subject filter of partition `n`. */
  partitionSubjects(n: number): string;
}

/** The names derived from `stream`. @internal */
export function jetStreamNames(stream: string): JetStreamNames {
  return {
    stream,
    events: `${stream}_EVENTS`,
    notices: `${stream}_NOTICES`,
    settled: `${stream}_SETTLED`,
    leases: `${stream}_LEASES`,
    outcomes: `${stream}_OUTCOMES`,
    dead: `${stream}_DEAD`,
    attempts: `${stream}_ATTEMPTS`,
    receipts: `${stream}_RECEIPTS`,
    consumer: (n) => `${stream}_p${n}`,
    partitionSubjects: (n) => `${stream}.p${n}.*`,
  };
}

/** Where a session key's entries go: its partition and its subject. @internal */
export interface KeyPlace {
  /** The partition, 0 … partitions − 1. */
  readonly partition: number;
  /** 20 hex digits of the key's SHA-256 (80 bits): the last token of its subject. */
  readonly hash: string;
  /** `<stream>.p<n>.<hash>`. */
  readonly subject: string;
}

/** The places computed lately (a SHA-256 per accept and per call on a key otherwise), by stream, partitions and key. */
const places = new Map<string, KeyPlace>();
/** The most places remembered (the memory is dropped past it). */
const MAX_PLACES = 10_000;

/** The partition and subject of `sessionKey`. @internal */
export function placeKey(stream: string, partitions: number, sessionKey: string): KeyPlace {
  const memo = `${stream}\n${partitions}\n${sessionKey}`;
  const known = places.get(memo);
  if (known !== undefined) return known;
  const digest = createHash('sha256').update(sessionKey, 'utf8').digest('hex');
  const partition = Number.parseInt(digest.slice(0, 8), 16) % partitions;
  const hash = digest.slice(8, 28);
  const place: KeyPlace = { partition, hash, subject: `${stream}.p${partition}.${hash}` };
  if (places.size >= MAX_PLACES) places.clear();
  places.set(memo, place);
  return place;
}

/** The `Nats-Msg-Id` of a dedupe id: its SHA-256 (ids may hold characters a header cannot). @internal */
export function msgIdOf(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

/** A KV key for any receipt id (receipt ids are free text when they come from a caller). @internal */
export function receiptKey(receiptId: string): string {
  return `r${createHash('sha256').update(receiptId, 'utf8').digest('hex').slice(0, 40)}`;
}

const RECEIPT = /^([1-9][0-9]{0,19})-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** A receipt id of this transport: `<stream sequence>-<uuid>`. @internal */
export function receiptIdOf(seq: number | string, uuid: string): string {
  return `${seq}-${uuid}`;
}

/** The stream sequence and uuid of a receipt id of this transport, or `undefined` for any other string. @internal */
export function parseReceiptId(receiptId: string): { readonly seq: number; readonly uuid: string } | undefined {
  const match = RECEIPT.exec(receiptId);
  if (match === null) return undefined;
  const seq = Number(match[1]);
  return Number.isSafeInteger(seq) ? { seq, uuid: match[2] as string } : undefined;
}

/** Milliseconds as the nanoseconds the JetStream API takes. @internal */
export function nanos(ms: number): number {
  return ms * 1_000_000;
}
