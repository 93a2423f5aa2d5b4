import { isJsonRecord } from './frozen-mark.js';
import { cutHistoryLink, linkedSkip } from './history-link.js';

/**
 * What a kept version's data has in place of its `history` while the memory store keeps the
 * history's messages in its key's log ({@link KeptVersions}): same key, same place. Never handed
 * out: a read puts a copy of the messages back.
 * @internal
 */
const HISTORY_IN_LOG: Readonly<Record<string, never>> = Object.freeze({});

/** A version's data with its history cut out ({@link cutHistory}), and that history. @internal */
interface CutHistory {
  readonly data: object;
  readonly history: readonly unknown[];
}

/**
 * The `history` of stored data (`data` as core's `copyCheckpointData` returns it: a copy the store
 * owns, or a shared frozen JSON value) cut out of it, when it is a frozen JSON list (core's
 * `frozenJsonValue`, as a Runner's history is): a shared record is copied once without it (its
 * other values shared, its keys in the same order), an owned one has it replaced in place.
 * `undefined` for anything else (kept as it is).
 * @internal
 */
function cutHistory(data: unknown): CutHistory | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const history = (data as { history?: unknown }).history;
  if (!Array.isArray(history) || !Object.prototype.hasOwnProperty.call(data, 'history') || !isJsonRecord(history))
    return undefined;
  if (!isJsonRecord(data)) {
    (data as { history: unknown }).history = HISTORY_IN_LOG;
    return { data, history };
  }
  // A session checkpoint's record (core's SessionCheckpointV1, as a Runner saves it): its fields
  // copied by name (a generic copy of any record's fields costs several times more).
  if (keysAre(data, CHECKPOINT_KEYS)) return { data: new CheckpointWithoutHistory(data), history };
  if (keysAre(data, ENGINE_CHECKPOINT_KEYS)) return { data: new EngineCheckpointWithoutHistory(data), history };
  if (Object.prototype.hasOwnProperty.call(data, '__proto__')) return undefined;
  return { data: new RecordWithoutHistory(data), history };
}

const CHECKPOINT_KEYS = ['v', 'agentId', 'strategy', 'history', 'cause'];
const ENGINE_CHECKPOINT_KEYS = ['v', 'agentId', 'strategy', 'history', 'engine', 'cause'];

/**
 * Whether `record`'s enumerable keys are `keys`, in that order, all its own (for-in lists own keys
 * first: the last one own means every one is).
 */
function keysAre(record: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in record) if (key !== keys[i++]) return false;
  return i === keys.length && Object.prototype.hasOwnProperty.call(record, keys[i - 1] as string);
}

type CheckpointFields = Record<'v' | 'agentId' | 'strategy' | 'history' | 'engine' | 'cause', unknown>;

/** `{ v, agentId, strategy, history: HISTORY_IN_LOG, cause }` of a checkpoint record (a plain object, fields in the object itself). */
const CheckpointWithoutHistory = function checkpointWithoutHistory(this: CheckpointFields, r: CheckpointFields): void {
  this.v = r.v;
  this.agentId = r.agentId;
  this.strategy = r.strategy;
  this.history = HISTORY_IN_LOG;
  this.cause = r.cause;
} as unknown as new (record: object) => object;
(CheckpointWithoutHistory as unknown as { prototype: object }).prototype = Object.prototype;

/** `{ v, agentId, strategy, history: HISTORY_IN_LOG, engine, cause }` of a checkpoint record with an engine state. */
const EngineCheckpointWithoutHistory = function engineCheckpointWithoutHistory(
  this: CheckpointFields,
  r: CheckpointFields,
): void {
  this.v = r.v;
  this.agentId = r.agentId;
  this.strategy = r.strategy;
  this.history = HISTORY_IN_LOG;
  this.engine = r.engine;
  this.cause = r.cause;
} as unknown as new (record: object) => object;
(EngineCheckpointWithoutHistory as unknown as { prototype: object }).prototype = Object.prototype;

/**
 * A shared record's copy with {@link HISTORY_IN_LOG} for its history: a constructor of plain
 * objects (prototype `Object.prototype`), so V8 sizes its objects to hold their fields in the
 * object itself (no separate property store, as a literal's would need past four fields).
 */
const RecordWithoutHistory = function recordWithoutHistory(this: Record<string, unknown>, record: object): void {
  for (const key in record) {
    if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
    this[key] = key === 'history' ? HISTORY_IN_LOG : (record as Record<string, unknown>)[key];
  }
} as unknown as new (record: object) => object;
(RecordWithoutHistory as unknown as { prototype: object }).prototype = Object.prototype;

/** At most this many partial overlaps are compared before a history is logged whole. */
const MAX_OVERLAP_TRIES = 4;

/** No log (yet): shared, never written (the first history grows the log before writing). */
const NO_LOG: unknown[] = [];

/** Fields per version in {@link KeptVersions}' ring: data, updatedAt, where its history starts in the log, its length. */
const STRIDE = 4;

/**
 * A key's kept versions, for the memory store. A ring of `span` versions, version `v` in slot
 * `(v - 1) % span` (versions are consecutive from 1, so the newest `span` never collide), each
 * slot's fields side by side in one list (a save writes one place, no object made for it). A
 * version whose `history` is a frozen JSON list (a Runner's) keeps it in the key's log instead:
 * consecutive versions mostly keep the previous history's tail plus a few new messages, so each
 * message is logged once, and a version keeps only where its history starts and its length. The
 * log is a ring too (positions are absolute; position `p` in `log[p & (log.length - 1)]`), grown
 * when the messages kept versions reach outgrow it.
 * @internal
 */
export class KeptVersions {
  /** The current version. */
  latest: number;
  readonly #span: number;
  /** Per slot: data (with {@link HISTORY_IN_LOG} for a logged history), updatedAt, from (−1: not logged), count. */
  readonly #slots: unknown[] = [];
  /** Made on the first logged history (a key that never has one keeps none), grown by doubling. */
  #log: unknown[] = NO_LOG;
  /** The position after the last logged message. */
  #end = 0;
  /** Where the history logged last starts (it ends at the log's end), −1 when the latest version has none logged. */
  #lastFrom = -1;
  /** The history logged last (while `#lastFrom` ≥ 0): what a new history's links ({@link linkedSkip}) may name. */
  #lastList: readonly unknown[] | undefined = undefined;

  constructor(span: number) {
    this.latest = 0;
    this.#span = span;
  }

  /** Stores version `latest + 1`: `data` (owned by the store, as `copyCheckpointData` returns it). */
  put(data: unknown, updatedAt: string, oldest: number): void {
    const version = this.latest + 1;
    const at = ((version - 1) % this.#span) * STRIDE;
    const slots = this.#slots;
    const cut = cutHistory(data);
    let from = -1;
    if (cut === undefined) {
      this.#lastFrom = -1;
      this.#lastList = undefined;
    } else {
      const latestFrom = this.latest === 0 ? -1 : (slots[((this.latest - 1) % this.#span) * STRIDE + 2] as number);
      from = this.#add(cut.history, latestFrom, oldest);
    }
    // In field order: the ring grows by appending until it is full (no holes).
    slots[at] = cut === undefined ? data : cut.data;
    slots[at + 1] = updatedAt;
    slots[at + 2] = from;
    slots[at + 3] = cut === undefined ? 0 : cut.history.length;
    this.latest = version;
  }

  /** Version `version`'s data (history cut out when logged), updatedAt, and logged history (taken now). */
  at(version: number): { data: unknown; updatedAt: string; history: unknown[] | undefined } {
    const at = ((version - 1) % this.#span) * STRIDE;
    const slots = this.#slots;
    const from = slots[at + 2] as number;
    let history: unknown[] | undefined;
    if (from >= 0) {
      const count = slots[at + 3] as number;
      const log = this.#log;
      const mask = log.length - 1;
      history = new Array<unknown>(count);
      for (let i = 0; i < count; i++) history[i] = log[(from + i) & mask];
    }
    return { data: slots[at], updatedAt: slots[at + 1] as string, history };
  }

  /**
   * Logs `history`: the messages it shares with the tail of the history logged last — when that
   * is the latest version's (`latestFrom`) — are not logged again. Returns where it starts.
   * `oldest`: the oldest version kept once this one is (what the log must still reach).
   */
  #add(history: readonly unknown[], latestFrom: number, oldest: number): number {
    const last = this.#lastFrom;
    const skip = latestFrom >= 0 && latestFrom === last ? this.#skip(history) : -1;
    const shared = skip < 0 ? 0 : this.#end - last - skip;
    const from = skip < 0 ? this.#end : last + skip;
    this.#reserve(from, from + history.length, oldest);
    const log = this.#log;
    const mask = log.length - 1;
    for (let i = shared; i < history.length; i++) log[this.#end++ & mask] = history[i];
    this.#lastFrom = from;
    this.#lastList = history;
    // Logged: its links (to the lists it extends) serve no one now, and would keep those alive.
    cutHistoryLink(history);
    return from;
  }

  /**
   * {@link KeptVersions.#overlap}, told by `next`'s links when it extends the history logged last
   * (a Runner's histories say so: no message compared), else found by comparing.
   */
  #skip(next: readonly unknown[]): number {
    const linked = this.#lastList === undefined ? -1 : linkedSkip(next, this.#lastList);
    if (linked < 0) return this.#overlap(next);
    return linked < this.#end - this.#lastFrom ? linked : -1;
  }

  /**
   * Where in the history logged last a tail starts that is the start of `next` (the same
   * objects), counted from that history's start, or −1. Tries at most a few starts (each where
   * `next[0]` is). Reads the log rather than the last list: a frozen list's elements are slower
   * to read.
   */
  #overlap(next: readonly unknown[]): number {
    const log = this.#log;
    const mask = log.length - 1;
    const start = this.#lastFrom;
    const length = this.#end - start;
    if (next.length === 0) return -1;
    const first = next[0];
    let tries = 0;
    for (let skip = Math.max(0, length - next.length); skip < length; skip++) {
      if (log[(start + skip) & mask] !== first) continue;
      if (++tries > MAX_OVERLAP_TRIES) return -1;
      let i = 1;
      while (skip + i < length && log[(start + skip + i) & mask] === next[i]) i++;
      if (skip + i === length) return skip;
    }
    return -1;
  }

  /**
   * Grows the log (a power of two) so that everything from the oldest kept version's history
   * (or `from`, where the new one starts, when that is before it) to `end` fits.
   */
  #reserve(from: number, end: number, oldest: number): void {
    const reach = Math.min(this.#reach(oldest), from);
    const log = this.#log;
    if (end - reach <= log.length) return;
    let size = Math.max(8, log.length * 2);
    while (size < end - reach) size *= 2;
    const grown = new Array<unknown>(size).fill(null);
    const mask = log.length - 1;
    for (let p = reach; p < this.#end; p++) grown[p & (size - 1)] = log[p & mask];
    this.#log = grown;
  }

  /** Where the oldest kept version in the log starts (versions log in order, each at or after the one before). */
  #reach(oldest: number): number {
    for (let v = oldest; v <= this.latest; v++) {
      const from = this.#slots[((v - 1) % this.#span) * STRIDE + 2] as number;
      if (from >= 0) return from;
    }
    return this.#end;
  }
}
