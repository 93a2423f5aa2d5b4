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
  /** When the live lease expires (epoch ms, the server's clock); 0 without one. */
  readonly expiresAt: number;
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

/** What this instance knows of a name it wrote last: the revision it wrote, and its own lease there (`undefined`: it gave it up). */
interface Known {
  readonly revision: number;
  readonly value: LeaseValue | undefined;
  /** Local `Date.now()` until which the lease is surely live (it was written before this, and nobody else may take it earlier). */
  readonly until: number;
}

/** Of a lease's time, the share this process trusts without asking (the rest covers clock estimates and a slow write). */
const TRUSTED_SHARE = 0.75;
/** How long a lease seen live is not asked about again by `takeFree` (ms; never past its expiry). */
const BUSY_RECHECK_MS = 1000;

/**
 * Leases in a KV bucket, taken, renewed and given up with compare-and-set (`create`,
 * `update(revision)`), expiring `ms` after their last write by the server's timestamp (and at the
 * bucket's `max_age` at the latest); giving a lease up writes an empty value (free). `now` is the
 * server's clock as this process estimates it.
 *
 * What this instance wrote last under a name is remembered (the revision, its own lease): a renew,
 * a give-up or a take of a name it freed is then one compare-and-set without a read first (a
 * lost race reads and decides again), and whether it still holds a lease it wrote less than
 * 3/4 of the lease's time ago is answered without a request (nobody else can take it before it
 * expires).
 * @internal
 */
export class KvLeases {
  readonly #kv: KV;
  readonly #now: () => number;
  readonly #known = new Map<string, Known>();
  /** Names seen leased (by another), not asked about again by `takeFree` before this local time. */
  readonly #busyUntil = new Map<string, number>();

  constructor(kv: KV, now: () => number) {
    this.#kv = kv;
    this.#now = now;
  }

  #remember(name: string, revision: number, value: LeaseValue | undefined, sentAt: number): void {
    if (this.#known.size > 100_000) this.#known.clear();
    const until = value === undefined ? 0 : sentAt + Math.floor(value.ms * TRUSTED_SHARE);
    this.#known.set(name, { revision, value, until });
  }

  /** Whether this instance wrote the lease `token` under `name` recently enough that it is surely still live (no request). */
  heldHere(name: string, token: string): boolean {
    const known = this.#known.get(name);
    return known?.value?.t === token && Date.now() < known.until;
  }

  /** Whether this instance wrote a lease of its own under `name` recently enough that it is surely still live (no request). */
  mine(name: string): boolean {
    const known = this.#known.get(name);
    return known?.value !== undefined && Date.now() < known.until;
  }

  /** The lease state under `name`. */
  async state(name: string): Promise<LeaseState> {
    const entry = await this.#kv.get(name);
    const value = parseValue(entry);
    const expiresAt = entry === null || value === undefined ? 0 : entry.created.getTime() + value.ms;
    const live = value !== undefined && expiresAt > this.#now() ? value : undefined;
    const known = this.#known.get(name);
    if (known !== undefined && known.revision !== (entry?.revision ?? 0)) this.#known.delete(name);
    if (live !== undefined) {
      if (this.#busyUntil.size > 100_000) this.#busyUntil.clear();
      this.#busyUntil.set(name, Date.now() + Math.min(BUSY_RECHECK_MS, expiresAt - this.#now()));
    }
    return { revision: entry?.revision ?? 0, live, expiresAt: live === undefined ? 0 : expiresAt };
  }

  /** Writes `value` under `name` if its revision is still `revision` (0: never written); false when another write came first. */
  async #write(name: string, value: LeaseValue | undefined, revision: number): Promise<boolean> {
    const sentAt = Date.now();
    const data = value === undefined ? '' : JSON.stringify(value);
    try {
      const written = revision === 0 ? await this.#kv.create(name, data) : await this.#kv.update(name, data, revision);
      this.#remember(name, written, value, sentAt);
      this.#busyUntil.delete(name);
      return true;
    } catch (error) {
      if (!lostRace(error)) throw error;
      this.#known.delete(name);
      return false;
    }
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
    return (await this.#write(name, value, state.revision)) ? value : undefined;
  }

  /**
   * Takes `name` like {@link KvLeases.take}, reading its state first unless this instance freed
   * it last (then one compare-and-set; if another write came since, it reads and decides again).
   * A name seen leased is not asked about again for a second (or until that lease expires, if
   * sooner): a lease given up early elsewhere is taken here up to a second later.
   */
  async takeFree(name: string, workerId: string, ms: number, sessionKey?: string): Promise<LeaseValue | undefined> {
    if ((this.#busyUntil.get(name) ?? 0) > Date.now()) return undefined;
    const known = this.#known.get(name);
    if (known !== undefined && known.value === undefined) {
      const value: LeaseValue = {
        w: workerId,
        t: randomHex(8),
        ms,
        ...(sessionKey !== undefined && { s: sessionKey }),
      };
      if (await this.#write(name, value, known.revision)) return value;
    }
    return this.take(name, await this.state(name), workerId, ms, sessionKey);
  }

  /** Renews the live lease under `name` whose token is `token` for its `ms`, from now; false when it is not live (expired, released, taken over). */
  async renew(name: string, token: string): Promise<boolean> {
    const known = this.#known.get(name);
    if (known?.value?.t === token && Date.now() < known.until) {
      return this.#write(name, known.value, known.revision); // live (see heldHere): nobody else wrote if the revision holds
    }
    const state = await this.state(name);
    if (state.live?.t !== token) return false;
    return this.#write(name, state.live, state.revision);
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
    if (this.heldHere(name, token)) {
      const known = this.#known.get(name) as Known;
      if (await this.#write(name, undefined, known.revision)) return true;
    }
    const state = await this.state(name);
    if (state.live?.t !== token) return false;
    return this.#write(name, undefined, state.revision);
  }
}
