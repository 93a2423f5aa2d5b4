import { randomBytes } from 'node:crypto';
import type { KV, KvEntry } from '@nats-io/kv';
import { isApiCode } from './jetstream-errors.js';

/** A lease as kept in the lease bucket: `k<keyhash>` for a session key, `p<n>` for a partition. @internal */
export interface LeaseValue {
  /** The worker holding it. */
  readonly w: string;
  /** This acquisition's token. */
  readonly t: string;
  /** Its lease time: it expires `ms` after the entry's last write (the server's timestamp). */
  readonly ms: number;
  /** The session key, for a key lease (what operators see). */
  readonly s?: string;
}

/** A live lease with its name and expiry (epoch ms, the server's clock). @internal */
export interface LiveLease {
  readonly name: string;
  readonly value: LeaseValue;
  readonly expiresAt: number;
}

/** What the lease bucket holds under one name now. @internal */
export interface LeaseState {
  /** The KV revision (for compare-and-set), 0 when the name never existed. */
  readonly revision: number;
  /** The lease, when one is live. */
  readonly live: LeaseValue | undefined;
}

/** The parts of a key lease's token: `<partition>.<token>`. @internal */
export interface KeyLeaseToken {
  readonly partition: number;
  readonly token: string;
}

const TOKEN = /^(\d{1,4})\.([0-9a-f]{16})$/;

/** A key lease's token. @internal */
export function keyLeaseToken(partition: number, token: string): string {
  return `${partition}.${token}`;
}

/** The parts of a key lease's token, or `undefined` for another string. @internal */
export function parseKeyLeaseToken(token: string): KeyLeaseToken | undefined {
  const match = TOKEN.exec(token);
  if (match === null) return undefined;
  return { partition: Number(match[1]), token: match[2] as string };
}

/** A fresh random hex id of `bytes` bytes. @internal */
function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function parseValue(entry: KvEntry | null): LeaseValue | undefined {
  if (entry?.operation !== 'PUT' || entry.length === 0) return undefined;
  try {
    return entry.json<LeaseValue>();
  } catch {
    return undefined;
  }
}

/** Whether a compare-and-set lost (the name moved on since it was read). */
function lostRace(error: unknown): boolean {
  return isApiCode(error, 10071) || (error instanceof Error && /wrong last sequence/i.test(error.message));
}

/**
 * Leases in a KV bucket, taken, renewed and given up with compare-and-set (`create`,
 * `update(revision)`, `delete(previousSeq)`), expiring `ms` after their last write by the
 * server's timestamp (and at the bucket's `max_age` at the latest). `now` is the server's clock
 * as this process estimates it.
 * @internal
 */
export class KvLeases {
  readonly #kv: KV;
  readonly #now: () => number;

  constructor(kv: KV, now: () => number) {
    this.#kv = kv;
    this.#now = now;
  }

  /** The lease state under `name`. */
  async state(name: string): Promise<LeaseState> {
    const entry = await this.#kv.get(name);
    const value = parseValue(entry);
    const expiresAt = entry === null || value === undefined ? 0 : entry.created.getTime() + value.ms;
    const live = value !== undefined && expiresAt > this.#now() ? value : undefined;
    return { revision: entry?.revision ?? 0, live };
  }

  /** Takes `name` for `workerId` when no live lease holds it (as `state` saw it); the new value, or `undefined` when another taker won. */
  async take(
    name: string,
    state: LeaseState,
    workerId: string,
    ms: number,
    sessionKey?: string,
  ): Promise<LeaseValue | undefined> {
    if (state.live !== undefined) return undefined;
    const value: LeaseValue = { w: workerId, t: randomHex(8), ms, ...(sessionKey !== undefined && { s: sessionKey }) };
    try {
      if (state.revision === 0) await this.#kv.create(name, JSON.stringify(value));
      else await this.#kv.update(name, JSON.stringify(value), state.revision);
      return value;
    } catch (error) {
      if (lostRace(error)) return undefined;
      throw error;
    }
  }

  /** Renews the live lease under `name` whose token is `token` for its `ms`, from now; false when it is not live (expired, released, taken over). */
  async renew(name: string, token: string): Promise<boolean> {
    const state = await this.state(name);
    if (state.live?.t !== token) return false;
    try {
      await this.#kv.update(name, JSON.stringify(state.live), state.revision);
      return true;
    } catch (error) {
      if (lostRace(error)) return false;
      throw error;
    }
  }

  /** The live leases whose names start with `prefix`. */
  async live(prefix: string): Promise<LiveLease[]> {
    const names: string[] = [];
    for await (const name of await this.#kv.keys()) if (name.startsWith(prefix)) names.push(name);
    const now = this.#now();
    const out: LiveLease[] = [];
    for (const name of names) {
      const entry = await this.#kv.get(name);
      const value = parseValue(entry);
      if (entry === null || value === undefined) continue;
      const expiresAt = entry.created.getTime() + value.ms;
      if (expiresAt > now) out.push({ name, value, expiresAt });
    }
    return out;
  }

  /** Gives up the live lease under `name` whose token is `token` (a lease already lost is left alone); true when it was given up. */
  async giveUp(name: string, token: string): Promise<boolean> {
    const state = await this.state(name);
    if (state.live?.t !== token) return false;
    try {
      await this.#kv.delete(name, { previousSeq: state.revision });
      return true;
    } catch (error) {
      if (lostRace(error)) return false;
      throw error;
    }
  }
}
