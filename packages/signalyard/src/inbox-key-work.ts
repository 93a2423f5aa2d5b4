import type { Inbox, InboxLease, Outcome } from '@signalyard/core';
import { agentIdOf, parseSessionKey } from '@signalyard/sessions';
import type { Job } from './live-session.js';

/** One leased session key of a worker: its lease, what was fed to the queue, what is still to finish. @internal */
export interface KeyWork {
  readonly key: string;
  readonly lease: InboxLease;
  /** The lease is lost (or given up): nothing more is fed, settled or saved under it. */
  lost: boolean;
  /** The first entry under this lease reloads the session (another worker may have moved it on). */
  fresh: boolean;
  /** The highest `seq` fed to the queue. */
  fedThrough: string | undefined;
  /** Entries fed and not finished yet. */
  pending: number;
  /** The outcomes of the entries fed and not finished yet, by receipt id. */
  readonly outcomes: Map<string, { readonly job: Job | undefined; readonly outcome: Promise<Outcome> }>;
  /** Entries a delete entry's sweep acknowledged (their outcomes stored): their finish does nothing more. */
  readonly swept: Set<string>;
  /** Finishes entries one after another, in `seq` order. */
  finishing: Promise<void>;
  feeding: Promise<void> | undefined;
  feedAgain: boolean;
  /** A read began since the last poll tick: that tick leaves the key alone (it was just looked at). */
  readSincePoll: boolean;
  renewTimer: ReturnType<typeof setInterval> | undefined;
  /** Counts the waits to give the lease up: one ends quietly when another began since. */
  idleSpells: number;
  /** When (`performance.now()`) the key was first found without entries since its last one; `undefined` while it has work. */
  idleSince: number | undefined;
}

/** How long a worker keeps the lease of a key that ran out of entries: `pollMs`, at least 1 s (and under a third of `leaseMs`). @internal */
export function idleLeaseMs(settings: { readonly pollMs: number; readonly leaseMs: number }): number {
  return Math.min(Math.max(settings.pollMs, 1000), Math.floor(settings.leaseMs / 3));
}

/** Whether `work` stayed idle through its wait `spell` to give the lease up: no work came (its own wait gives it up later), no read is under way, no later wait took over. @internal */
export function stillIdle(work: KeyWork, spell: number): boolean {
  return work.feeding === undefined && work.idleSince !== undefined && work.idleSpells === spell;
}

/**
 * Whether `work` is a key kept idle ({@link idleLeaseMs}) whose lease can be given up at once: no
 * entry pending, no read under way. A worker whose `maxSessions` slots are all taken gives such
 * leases up for keys with entries (an idle lease never keeps a waiting session out). @internal
 */
export function isSpare(work: KeyWork): boolean {
  return work.idleSince !== undefined && work.pending === 0 && !work.lost && work.feeding === undefined;
}

/** A key's work as it starts under a newly acquired lease. @internal */
export function newKeyWork(lease: InboxLease): KeyWork {
  return {
    key: lease.key,
    lease,
    lost: false,
    fresh: true,
    fedThrough: undefined,
    pending: 0,
    outcomes: new Map(),
    swept: new Set(),
    finishing: Promise.resolve(),
    feeding: undefined,
    feedAgain: false,
    readSincePoll: false,
    renewTimer: undefined,
    idleSpells: 0,
    idleSince: undefined,
  };
}

/** Renews `lease` every `leaseMs / 3` until the timer is cleared; `lost` hears why it could not be. @internal */
export function renewTimer(
  inbox: Inbox,
  lease: InboxLease,
  leaseMs: number,
  lost: (why: unknown) => void,
): ReturnType<typeof setInterval> {
  const timer = setInterval(
    () => {
      inbox.renew(lease).then((held) => {
        if (!held) lost('the lease expired or was taken over');
      }, lost);
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  return timer;
}

/** The agent id a session key names, if it parses and names one. @internal */
export function agentIdOfKey(key: string): string | undefined {
  try {
    return agentIdOf(parseSessionKey(key));
  } catch {
    return undefined;
  }
}
