import type { InboxLease } from '@signalyard/core';
import { pendingKeys, type Ready } from './jetstream-inbox-parts.js';
import type { ResolvedJetStreamInboxOptions } from './jetstream-inbox-options.js';
import { keyLeaseToken } from './jetstream-leases.js';
import { PartitionHolder } from './jetstream-partition-holder.js';
import { partitionConsumerConfig } from './jetstream-provision.js';

/** The partitions holding entries, oldest waiting entry first. */
async function busyPartitions(r: Ready): Promise<number[]> {
  const firsts = await Promise.all(
    Array.from({ length: r.partitions }, (_, n) =>
      r.c.jsm.direct.getMessage(r.names.stream, { next_by_subj: r.names.partitionSubjects(n), seq: 1 }),
    ),
  );
  const busy: { n: number; first: number }[] = [];
  firsts.forEach((message, n) => {
    if (message !== null) busy.push({ n, first: message.seq });
  });
  return busy.sort((a, b) => a.first - b.first).map((b) => b.n);
}

/** This process's partition holders and how many key leases it holds in each. @internal */
export interface Holders {
  readonly holders: Map<number, PartitionHolder>;
  readonly keyLeases: Map<number, number>;
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
  if (mine !== undefined && !mine.lost) return;
  if (mine !== undefined) {
    // lost: let go of the partition at once (if still ours), so that a holder can recreate its consumer
    mine.stop();
    h.holders.delete(n);
    await r.leases.giveUp(`p${n}`, mine.token);
  }
  const name = `p${n}`;
  const state = await r.leases.state(name);
  if (state.live !== undefined) return;
  const value = await r.leases.take(name, state, workerId, o.leaseMs);
  if (value === undefined) return;
  const holder = new PartitionHolder(value.t, () => r.leases.renew(name, value.t));
  h.holders.set(n, holder);
  await holder.start(r.c.js, r.c.jsm, r.names.stream, partitionConsumerConfig(r.names, o, n), o.leaseMs);
}

/**
 * `Inbox.acquire` on JetStream: goes through the partitions holding entries (oldest waiting
 * entry first) and their session keys (oldest first), and takes each key's lease with
 * compare-and-set in the lease bucket (`k<keyhash>`) until `max` are taken; for every partition
 * it got keys in, makes sure a process holds the partition's consumer ({@link ensureHolder}).
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
  const partitions = await busyPartitions(r);
  const keysOf = await Promise.all(partitions.map((n) => pendingKeys(r, n)));
  const queue = partitions.flatMap((n, i) => (keysOf[i] ?? []).map((key) => ({ n, ...key })));
  const out: InboxLease[] = [];
  const got = new Map<number, number>();
  // In waves of the keys still wanted, in parallel: each is one compare-and-set, and a lost race only skips that key.
  while (out.length < max && queue.length > 0) {
    const wave = queue.splice(0, max - out.length);
    const taken = await Promise.all(
      wave.map(async (key) => {
        const name = `k${key.hash}`;
        return r.leases.take(name, await r.leases.state(name), workerId, leaseMs, key.key);
      }),
    );
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

/** One key lease fewer in partition `n` in this process: the last one stops pulling the partition and gives its lease up. @internal */
export async function dropKeyLease(r: Ready, h: Holders, n: number): Promise<void> {
  const left = (h.keyLeases.get(n) ?? 1) - 1;
  if (left > 0) {
    h.keyLeases.set(n, left);
    return;
  }
  h.keyLeases.delete(n);
  const holder = h.holders.get(n);
  if (holder === undefined) return;
  holder.stop();
  h.holders.delete(n);
  await r.leases.giveUp(`p${n}`, holder.token);
}
