import type { InboxLease } from '@signalyard/core';
import type { Ready } from './jetstream-inbox-parts.js';
import type { ResolvedJetStreamInboxOptions } from './jetstream-inbox-options.js';
import { keyLeaseToken } from './jetstream-leases.js';
import { PartitionHolder } from './jetstream-partition-holder.js';
import { partitionConsumerConfig } from './jetstream-provision.js';
import { WaitingKeys, type WaitingKey } from './jetstream-waiting-keys.js';

/** This process's partition holders and how many key leases it holds in each. @internal */
export interface Holders {
  readonly holders: Map<number, PartitionHolder>;
  readonly keyLeases: Map<number, number>;
  /** Partitions another process holds, until when (local `Date.now()`): not asked again before. */
  readonly othersUntil: Map<number, number>;
  /** The keys with entries waiting, as this instance last saw them. */
  readonly waiting: WaitingKeys;
}

/** New, empty holders of an inbox instance. @internal */
export function newHolders(): Holders {
  return { holders: new Map(), keyLeases: new Map(), othersUntil: new Map(), waiting: new WaitingKeys() };
}

/**
 * Makes sure some process holds partition `n`'s consumer: when its partition lease is free (its
 * holder died, stalled or let go), takes it for `workerId`, recreates the consumer after its ack
 * floor and starts pulling and keeping the pulled entries alive.
 * @internal
 */
export async function ensureHolder(
  r: Ready,
  h: Holders,
  o: ResolvedJetStreamInboxOptions,
  n: number,
  workerId: string,
): Promise<void> {
  const mine = h.holders.get(n);
  if (mine !== undefined && !mine.lost) {
    mine.busy();
    return;
  }
  if (mine !== undefined) {
    // lost: let go of the partition at once (if still ours), so that a holder can recreate its consumer
    mine.stop();
    h.holders.delete(n);
    await r.leases.giveUp(`p${n}`, mine.token);
  }
  if ((h.othersUntil.get(n) ?? 0) > Date.now()) return; // another holder's lease was live until then
  const name = `p${n}`;
  const state = await r.leases.state(name);
  if (state.live !== undefined) {
    h.othersUntil.set(n, Date.now() + (state.expiresAt - r.c.now()));
    return;
  }
  const value = await r.leases.take(name, state, workerId, o.leaseMs);
  if (value === undefined) return;
  // A key subject's last token is the key's hash: its lease is `k<hash>`.
  const reading = (subject: string): boolean => r.leases.mine(`k${subject.slice(subject.lastIndexOf('.') + 1)}`);
  const holder = new PartitionHolder(value.t, () => r.leases.renew(name, value.t), reading);
  h.holders.set(n, holder);
  await holder.start(r.c.js, r.c.jsm, r.names.stream, partitionConsumerConfig(r.names, o, n), o.leaseMs);
}

/**
 * The keys in partitions another process is known to hold go last (in their order): their
 * entries are settled through that holder's consumer less well (acknowledged by deleting them
 * from the stream), and that holder's own worker takes them.
 */
function preferHeld(keys: WaitingKey[], h: Holders): WaitingKey[] {
  const now = Date.now();
  const elsewhere = (key: WaitingKey): boolean => !h.holders.has(key.n) && (h.othersUntil.get(key.n) ?? 0) > now;
  return [...keys.filter((key) => !elsewhere(key)), ...keys.filter(elsewhere)];
}

/**
 * `Inbox.acquire` on JetStream: goes through the session keys with entries waiting (oldest
 * waiting entry first, {@link WaitingKeys}: one stream info and a direct get per key not seen
 * within the last second; those of partitions another process holds last), and takes each key's lease with compare-and-set in the lease bucket
 * (`k<keyhash>`; one write for a key this instance freed last) until `max` are taken; for every
 * partition it got keys in, makes sure a process holds the partition's consumer
 * ({@link ensureHolder}; a partition seen held by another process is not asked again until that
 * lease would expire).
 * @internal
 */
export async function acquireLeases(
  r: Ready,
  h: Holders,
  o: ResolvedJetStreamInboxOptions,
  workerId: string,
  leaseMs: number,
  max: number,
): Promise<InboxLease[]> {
  const queue = preferHeld(await h.waiting.list(r), h);
  const out: InboxLease[] = [];
  const got = new Map<number, number>();
  // In waves of the keys still wanted, in parallel: each is one compare-and-set, and a lost race only skips that key.
  while (out.length < max && queue.length > 0) {
    const wave = queue.splice(0, max - out.length);
    const taken = await Promise.all(wave.map((key) => r.leases.takeFree(`k${key.hash}`, workerId, leaseMs, key.key)));
    const expiresAt = new Date(r.c.now() + leaseMs).toISOString();
    wave.forEach((key, i) => {
      const value = taken[i];
      if (value === undefined) return;
      out.push({ key: key.key, workerId, token: keyLeaseToken(key.n, value.t), expiresAt });
      got.set(key.n, (got.get(key.n) ?? 0) + 1);
    });
  }
  for (const [n, count] of got) h.keyLeases.set(n, (h.keyLeases.get(n) ?? 0) + count);
  await Promise.all([...got.keys()].map((n) => ensureHolder(r, h, o, n, workerId)));
  return out;
}

/**
 * One key lease fewer in partition `n` in this process. After the last one a lost holder stops
 * and gives the partition up at once; a live one lingers `leaseMs` (see `PartitionHolder.idle`:
 * workers release a key whenever its session is drained, and recreating the consumer on the next
 * acquire would deliver the partition's waiting entries again).
 * @internal
 */
export async function dropKeyLease(r: Ready, h: Holders, n: number): Promise<void> {
  const left = (h.keyLeases.get(n) ?? 1) - 1;
  if (left > 0) {
    h.keyLeases.set(n, left);
    return;
  }
  h.keyLeases.delete(n);
  const holder = h.holders.get(n);
  if (holder === undefined) return;
  if (!holder.lost) {
    holder.idle(() => {
      if (h.holders.get(n) !== holder || h.keyLeases.has(n)) return;
      void retireHolder(r, h, n, holder).catch(() => undefined); // unreachable server: the partition lease expires
    });
    return;
  }
  await retireHolder(r, h, n, holder);
}

async function retireHolder(r: Ready, h: Holders, n: number, holder: PartitionHolder): Promise<void> {
  holder.stop();
  h.holders.delete(n);
  await r.leases.giveUp(`p${n}`, holder.token);
}
