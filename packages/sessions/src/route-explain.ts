import { describeValue } from '@signalyard/core';
import type { BindingTier, Candidate } from './binding-candidate.js';
import { canonicalId, foldId } from './normalize.js';
import type { InboundPeerKind, RouteBinding } from './routing-config.js';

/** An inbound message's fields as the resolver compares them (already validated by `resolve`). */
export interface NormalizedMessage {
  readonly channel: string;
  readonly account: string;
  readonly guild: string | undefined;
  readonly team: string | undefined;
  readonly peerKind: InboundPeerKind | undefined;
  readonly peerId: string | undefined;
}

/** One binding's verdict: the shape of `ConsideredBinding`. */
export interface BindingVerdict {
  readonly index: number;
  readonly binding: RouteBinding;
  readonly tier: BindingTier;
  readonly matched: boolean;
  readonly reason: string;
}

/** The fields of an inbound message, read once (so an object with getters is seen the same by resolve and explain). */
export function snapshotInput(input: unknown): unknown {
  if (typeof input !== 'object' || input === null) return input;
  const source = input as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of ['channel', 'accountId', 'peer', 'guildId', 'teamId', 'threadId'] as const) {
    const value = source[key];
    if (value === undefined) continue;
    if (key === 'peer' && typeof value === 'object' && value !== null) {
      const { kind, id } = value as { kind?: unknown; id?: unknown };
      out.peer = { kind, id };
    } else out[key] = value;
  }
  return out;
}

/**
 * The message's fields folded as `resolve` folds them. Call only after `resolve` accepted the
 * same (snapshotted) input: every field is then known to be valid.
 */
export function normalizeMessage(
  input: { accountId?: string; guildId?: string; teamId?: string; peer?: { kind: InboundPeerKind; id: string } },
  channel: string,
  caseSensitive: boolean,
): NormalizedMessage {
  return {
    channel,
    account: foldId(input.accountId ?? 'default'),
    guild: input.guildId === undefined ? undefined : foldId(input.guildId),
    team: input.teamId === undefined ? undefined : foldId(input.teamId),
    peerKind: input.peer?.kind,
    peerId: input.peer === undefined ? undefined : canonicalId(input.peer.id, caseSensitive),
  };
}

const show = (value: string | undefined): string => (value === undefined ? 'none' : describeValue(value));
const showPeer = (kind: string | undefined, id: string | undefined): string =>
  kind === undefined ? 'none' : `${kind} ${describeValue(id)}`;

/** Every constraint of `c` that `message` fails, as `field: wants X, got Y` (empty when it matches). */
function mismatches(c: Candidate, message: NormalizedMessage): string[] {
  const out: string[] = [];
  if (c.peerId !== undefined && (c.peerKind !== message.peerKind || c.peerId !== message.peerId)) {
    out.push(`peer: wants ${showPeer(c.peerKind, c.peerId)}, got ${showPeer(message.peerKind, message.peerId)}`);
  }
  if (c.guild !== undefined && c.guild !== message.guild)
    out.push(`guild: wants ${show(c.guild)}, got ${show(message.guild)}`);
  if (c.team !== undefined && c.team !== message.team)
    out.push(`team: wants ${show(c.team)}, got ${show(message.team)}`);
  if (c.account !== undefined && c.account !== message.account)
    out.push(`account: wants ${show(c.account)}, got ${show(message.account)}`);
  return out;
}

/** Why a matching binding that is not the winner lost to `winner`. */
function lostTo(c: Candidate, winner: Candidate | undefined): string {
  /* v8 ignore next -- resolve picks a winner whenever any binding matches */
  if (winner === undefined) return 'matched, but did not decide';
  return winner.tier === c.tier
    ? `matched, but bindings[${winner.index}] comes first at the same tier (${c.tier})`
    : `matched, but bindings[${winner.index}] matched at a more specific tier (${winner.tier} beats ${c.tier})`;
}

/**
 * Every binding on the message's channel (its own and the any-channel ones), in config order,
 * with whether it matched and why it won or lost. `winner` is the binding `resolve` chose.
 */
export function considerBindings(
  candidates: readonly Candidate[],
  message: NormalizedMessage,
  winner: RouteBinding | undefined,
): BindingVerdict[] {
  const won = winner === undefined ? undefined : candidates.find((c) => c.binding === winner);
  const out: BindingVerdict[] = [];
  for (const c of candidates) {
    if (c.channel !== undefined && c.channel !== message.channel) continue;
    const failed = mismatches(c, message);
    const matched = failed.length === 0;
    const reason = !matched
      ? `no match: ${failed.join('; ')}`
      : c === won
        ? `won: the first matching binding at the most specific tier that matched (${c.tier})`
        : lostTo(c, won);
    out.push(Object.freeze({ index: c.index, binding: c.binding, tier: c.tier, matched, reason }));
  }
  return out;
}
