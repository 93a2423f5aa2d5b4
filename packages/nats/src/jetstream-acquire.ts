import type { InboxLease } from '@signalyard/core';
import { pendingKeys, type Ready } from './jetstream-inbox-parts.js';
import type { ResolvedJetStreamInboxOptions } from './jetstream-inbox-options.js';
import { keyLeaseToken, randomHex, type PartitionLeaseState, type PartitionLeaseValue } from './jetstream-leases.js';
import { PartitionHolder } from './jetstream-partition-holder.js';
import { partitionConsumerConfig } from './jetstream-provision.js';

interface Candidate {
  readonly n: number;
  readonly state: PartitionLeaseState;
  readonly first: number;
}

/**
 * The partitions `workerId` may hand keys out of: free ones (no live lease) and the ones this
 * process holds for it, each with its oldest waiting entry's sequence, oldest first; partitions
 * with nothing waiting are left out.
 */
async function candidates(r: Ready, holders: ReadonlyMap<number, PartitionHolder>, workerId: string): Promise<Candidate[]> {
  const states = await Promise.all(Array.from({ length: r.partitions }, (_, n) => r.leases.state(n)));
  const open = states
    .map((state, n) => ({ n, state }))
    .filter(({ n, state }) => {
      if (state.live === undefined) return true;
      const holder = holders.get(n);
      return state.live.w === workerId && holder?.token === state.live.t && !holder.lost;
    });
  const firsts = await Promise.all(
    open.map(({ n }) => r.c.jsm.direct.getMessage(r.names.stream, { next_by_subj: r.names.partitionSubjects(n), seq: 1 })),
  );
  const out: Candidate[] = [];
  open.forEach((c, i) => {
    const first = firsts[i];
    if (first !== null && first !== undefined) out.push({ ...c, first: first.seq });
  });
  return out.sort((a, b) => a.first - b.first);
}

/** Takes partition `n` for `workerId` and starts pulling it; `undefined` when another worker won it. */
async function take(
  r: Ready,
  holders: Map<number, PartitionHolder>,
  o: ResolvedJetStreamInboxOptions,
  c: Candidate,
  workerId: string,
  leaseMs: number,
): Promise<PartitionLeaseValue | undefined> {
  const value = await r.leases.take(c.n, c.state, workerId, leaseMs);
  if (value === undefined) return undefined;
  holders.get(c.n)?.stop();
  const holder = new PartitionHolder(value.t);
  holders.set(c.n, holder);
  await holder.start(r.c.js, r.c.jsm, r.names.stream, partitionConsumerConfig(r.names, o, c.n), o.leaseMs);
  return value;
}

/**
 * `Inbox.acquire` on JetStream: takes free partitions (oldest waiting entry first) with
 * compare-and-set until `max` session keys are handed out, and hands out the keys of partitions
 * this process already holds for the worker that were not handed out yet. Each key lease is
 * recorded in its partition lease's value, so a key is never leased twice while the partition
 * lease lives; a partition taken with nothing left to hand out is given back at once.
 * @internal
 */
export async function acquireLeases(
  r: Ready,
  holders: Map<number, PartitionHolder>,
  o: ResolvedJetStreamInboxOptions,
  workerId: string,
  leaseMs: number,
  max: number,
): Promise<InboxLease[]> {
  const out: { first: number; lease: InboxLease }[] = [];
  for (const c of await candidates(r, holders, workerId)) {
    if (out.length >= max) break;
    const value = c.state.live ?? (await take(r, holders, o, c, workerId, leaseMs));
    if (value === undefined) continue;
    const keys = await pendingKeys(r, c.n);
    let given: { key: string; hash: string; first: number; id: string }[] = [];
    const written = await r.leases.change(c.n, value.t, (v) => {
      given = keys
        .filter((k) => v.k[k.hash] === undefined)
        .slice(0, max - out.length)
        .map((k) => ({ ...k, id: randomHex(6) }));
      if (given.length === 0 && Object.keys(v.k).length === 0) return null; // nothing to hand out: give the partition back
      const k = { ...v.k };
      for (const g of given) k[g.hash] = g.id;
      return { ...v, ms: leaseMs, k };
    });
    if (written === null) {
      holders.get(c.n)?.stop();
      holders.delete(c.n);
      continue;
    }
    if (written === undefined) continue;
    const expiresAt = new Date(r.c.now() + leaseMs).toISOString();
    for (const g of given) {
      out.push({ first: g.first, lease: { key: g.key, workerId, token: keyLeaseToken(c.n, value.t, g.id), expiresAt } });
    }
  }
  return out.sort((a, b) => a.first - b.first).map((x) => x.lease);
}
