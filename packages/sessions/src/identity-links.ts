import { ConfigError, describeValue } from '@signalyard/core';
import { canonicalId, normalizeChannel } from './normalize.js';
import { routingConfigSchema, routingProblems, splitLinkEntry } from './routing-config.js';
import { SessionKeyError } from './errors/session-key-error.js';
import { ID_CHARACTERS, idCharacterProblem } from '@signalyard/core/internal';

/** channel → peer id (folded unless the channel is case-sensitive) → canonical name. */
export type LinkIndex = ReadonlyMap<string, ReadonlyMap<string, string>>;

/**
 * Indexes validated identity links. Names are normalised like peer ids (trimmed, lowercased);
 * entries are split at the first `:`.
 */
export function buildLinkIndex(
  links: Readonly<Record<string, readonly string[]>>,
  caseSensitiveChannels: ReadonlySet<string>,
): LinkIndex {
  const index = new Map<string, Map<string, string>>();
  for (const name of Object.keys(links)) {
    const canonical = canonicalId(name, false);
    for (const entry of links[name] ?? []) {
      const split = splitLinkEntry(entry, caseSensitiveChannels);
      if (split === undefined) continue;
      let byId = index.get(split.channel);
      if (byId === undefined) index.set(split.channel, (byId = new Map<string, string>()));
      if (!byId.has(split.id)) byId.set(split.id, canonical);
    }
  }
  return index;
}

/** Options of {@link resolveLinkedPeerId}. */
export interface LinkLookupOptions {
  /** The channel's peer ids are case-sensitive: compare them exactly (NFC, trimmed) instead of case-folded. */
  readonly caseSensitive?: boolean;
}

/**
 * The canonical person name that an identity link gives `(channel, peerId)`, or `undefined`.
 *
 * Entries are `channel:id`, split at the **first** `:` (so `matrix:@alice:example.org` works).
 * A lookup compares against `"{channel}:{peerId}"` only: the channel lowercased, the id
 * case-insensitively unless `options.caseSensitive`. A bare entry such as `"123456"` never
 * matches: it is a config error, because it would let a user of any channel with that id into
 * the linked person's session. The returned name is normalised like a peer id (lowercased).
 *
 * @throws ConfigError (`CONFIG_INVALID`) when `links` is invalid: a bare or malformed entry, one
 *   entry linked to two names, a reserved name.
 * @throws SessionKeyError (`SESSION_KEY_INVALID`) when `channel` is not a channel name, or `peerId` is not
 *   a string or contains a NUL character (U+0000) or a lone surrogate.
 * @example
 * ```ts
 * const links = { john: ['telegram:123456', 'discord:789012'] };
 * resolveLinkedPeerId(links, 'Telegram', '123456');  // 'john'
 * resolveLinkedPeerId(links, 'slack', '123456');     // undefined: not linked on slack
 * ```
 */
export function resolveLinkedPeerId(
  links: Readonly<Record<string, readonly string[]>>,
  channel: string,
  peerId: string,
  options: LinkLookupOptions = {},
): string | undefined {
  const cs = options.caseSensitive === true;
  const ch = typeof channel === 'string' ? normalizeChannel(channel) : undefined;
  const csChannels = new Set<string>(cs && ch !== undefined ? [ch] : []);
  const result = routingConfigSchema.safeParse(
    { session: { identityLinks: links, caseSensitiveChannels: [...csChannels] } },
    { reportInput: true },
  );
  if (!result.success) {
    throw new ConfigError({ problems: routingProblems(result.error.issues, { mapPath: (p) => p.slice(1) }) });
  }
  if (ch === undefined) {
    throw new SessionKeyError({
      problem: 'channel',
      input: channel,
      message: `resolveLinkedPeerId: channel ${describeValue(channel)} is not a channel name ([a-z0-9][a-z0-9_.-]*)`,
    });
  }
  if (typeof peerId !== 'string') {
    throw new SessionKeyError({
      problem: 'peer id',
      input: peerId,
      message: `resolveLinkedPeerId: peer id ${describeValue(peerId)} is not a string`,
    });
  }
  const id = canonicalId(peerId, cs);
  const forbidden = idCharacterProblem(id);
  if (forbidden !== undefined) {
    throw new SessionKeyError({
      problem: `peer id ${forbidden}`,
      input: peerId,
      message: `resolveLinkedPeerId: peer id ${describeValue(peerId)} ${forbidden}; expected ${ID_CHARACTERS}`,
    });
  }
  return buildLinkIndex(result.data.session.identityLinks, csChannels).get(ch)?.get(id);
}
