import { canonicalId, foldId, normalizeChannel } from './normalize.js';
import type { InboundPeerKind, RouteBinding } from './routing-config.js';

/** The tier a binding belongs to: the most specific field it declares (`'default'` is no binding). */
export type BindingTier = 'peer' | 'guild' | 'team' | 'account' | 'channel';

/** A binding compiled for matching: every declared constraint normalised, `undefined` = any. */
export interface Candidate {
  readonly index: number;
  readonly binding: RouteBinding;
  readonly tier: BindingTier;
  readonly channel: string | undefined;
  readonly account: string | undefined;
  readonly guild: string | undefined;
  readonly team: string | undefined;
  readonly peerKind: InboundPeerKind | undefined;
  readonly peerId: string | undefined;
}

const wild = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '*' ? undefined : v);

/**
 * Compiles one validated binding: channel trimmed and lowercased, account, guild and team ids
 * folded, the peer id canonical for its channel (case-folded unless the channel is in
 * `caseSensitive`), `'*'` and omitted fields as `undefined`, and its tier.
 */
export function compileBinding(binding: RouteBinding, index: number, caseSensitive: ReadonlySet<string>): Candidate {
  const m = binding.match;
  const channelRaw = wild(m.channel);
  const channel = channelRaw === undefined ? undefined : normalizeChannel(channelRaw);
  const accountRaw = wild(m.accountId);
  const account = accountRaw === undefined ? undefined : foldId(accountRaw);
  const guild = m.guildId === undefined ? undefined : foldId(m.guildId);
  const team = m.teamId === undefined ? undefined : foldId(m.teamId);
  const peerKind = m.peer?.kind;
  const peerId =
    m.peer === undefined ? undefined : canonicalId(m.peer.id, channel !== undefined && caseSensitive.has(channel));
  const tier: BindingTier =
    peerId !== undefined
      ? 'peer'
      : guild !== undefined
        ? 'guild'
        : team !== undefined
          ? 'team'
          : account !== undefined
            ? 'account'
            : 'channel';
  return { index, binding, tier, channel, account, guild, team, peerKind, peerId };
}
