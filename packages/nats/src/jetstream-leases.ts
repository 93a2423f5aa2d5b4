import { randomBytes } from 'node:crypto';
import type { KV, KvEntry } from '@nats-io/kv';
import { isApiCode } from './jetstream-errors.js';

/** A partition lease as kept in the lease bucket (key `p<n>`). @internal */
export interface PartitionLeaseValue {
  /** The worker holding it. */
  readonly w: string;
  /** This acquisition's token. */
  readonly t: string;
  /** Its lease time: it expires `ms` after the entry's last write (the server's timestamp). */
  readonly ms: number;
  /** The session keys handed out under it: key hash → key lease id. */
  readonly k: Readonly<Record<string, string>>;
}

/** What the lease bucket holds for one partition now. @internal */
export interface PartitionLeaseState {
  /** The KV revision (for compare-and-set), 0 when the key never existed. */
  readonly revision: number;
  /** The lease, when one is live. */
  readonly live: PartitionLeaseValue | undefined;
  /** When the live lease expires (epoch ms, the server's clock). */
  readonly expiresAt: number;
}

/** The parts of a key lease's token: `<partition>.<partition token>.<key lease id>`. @internal */
export interface KeyLeaseToken {
  readonly partition: number;
  readonly token: string;
  readonly id: string;
}

const TOKEN = /^(\d{1,4})\.([0-9a-f]{16})\.([0-9a-f]{12})$/;

/** A key lease's token. @internal */
export function keyLeaseToken(partition: number, token: string, id: string): string {
  return `${partition}.${token}.${id}`;
}

/** The parts of a key lease's token, or `undefined` for another string. @internal */
export function parseKeyLeaseToken(token: string): KeyLeaseToken | undefined {
  const match = TOKEN.exec(token);
  if (match === null) return undefined;
  return { partition: Number(match[1]), token: match[2] as string, id: match[3] as string };
}

/** A fresh random hex id of `bytes` bytes. @internal */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function parseValue(entry: KvEntry | null): PartitionLeaseValue | undefined {
  if (entry === null || entry.operation !== 'PUT' || entry.length === 0) return undefined;
  try {
    return entry.json<PartitionLeaseValue>();
  } catch {
    return undefined;
  }
}

/** Whether a compare-and-set lost (the key moved on since it was read). */
function lostRace(error: unknown): boolean {
  return isApiCode(error, 10071) || (error instanceof Error && /wrong last sequence/i.test(error.message));
}

/**
 * Partition leases in a KV bucket, taken and renewed with compare-and-set (`create`, and
 * `update(revision)`), expiring `ms` after their last write by the server's timestamp (and the
 * bucket's `max_age` at the latest). `now` is the server's clock as this process estimates it.
 * @internal
 */
export class PartitionLeases {
  readonly #kv: KV;
  readonly #now: () => number;

  constructor(kv: KV, now: () => number) {
    this.#kv = kv;
    this.#now = now;
  }

  /** The lease state of partition `n`. */
  async state(n: number): Promise<PartitionLeaseState> {
    const entry = await this.#kv.get(`p${n}`);
    const value = parseValue(entry);
    const expiresAt = entry === null || value === undefined ? 0 : entry.created.getTime() + value.ms;
    const live = value !== undefined && expiresAt > this.#now() ? value : undefined;
    return { revision: entry?.revision ?? 0, live, expiresAt };
  }

  /** Takes partition `n` for `workerId` when no live lease holds it; resolves the new value, or `undefined` when it is held (or another taker won). */
  async take(n: number, state: PartitionLeaseState, workerId: string, ms: number): Promise<PartitionLeaseValue | undefined> {
    if (state.live !== undefined) return undefined;
    const value: PartitionLeaseValue = { w: workerId, t: randomHex(8), ms, k: {} };
    try {
      if (state.revision === 0) await this.#kv.create(`p${n}`, JSON.stringify(value));
      else await this.#kv.update(`p${n}`, JSON.stringify(value), state.revision);
      return value;
    } catch (error) {
      if (lostRace(error)) return undefined;
      throw error;
    }
  }

  /**
   * Changes the live lease of partition `n` whose token is `token` with `change` (compare-and-set,
   * retried when another change of the same lease won): resolves the value written, `null` when
   * `change` gave it up (the key is deleted: the partition is free), or `undefined` when the
   * lease is not live or `change` refuses (returns `false`).
   */
  async change(
    n: number,
    token: string,
    change: (value: PartitionLeaseValue) => PartitionLeaseValue | null | false,
  ): Promise<PartitionLeaseValue | null | undefined> {
    for (let tries = 0; tries < 20; tries++) {
      const state = await this.state(n);
      if (state.live?.t !== token) return undefined;
      const next = change(state.live);
      if (next === false) return undefined;
      try {
        if (next === null) await this.#kv.delete(`p${n}`, { previousSeq: state.revision });
        else await this.#kv.update(`p${n}`, JSON.stringify(next), state.revision);
        return next;
      } catch (error) {
        if (!lostRace(error)) throw error;
      }
    }
    return undefined;
  }
}
