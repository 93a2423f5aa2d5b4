import { describeValue } from '@signalyard/core';
import { deepFreeze } from '@signalyard/core/internal';
import { buildLinkIndex, type LinkIndex } from './identity-links.js';
import { compileBinding, type Candidate } from './binding-candidate.js';
import { canonicalId, foldId, normalizeChannel } from './normalize.js';
import { considerBindings, normalizeMessage, snapshotInput } from './route-explain.js';
import {
  caseSensitiveSet,
  validateRoutingConfig,
  type InboundPeerKind,
  type PeerRef,
  type RouteBinding,
  type RoutingConfig,
  type RoutingConfigInput,
} from './routing-config.js';
import { directMessageKey, groupKey, mainKey, type DmScope, type SessionKey } from './session-key.js';
import { SessionKeyError } from './errors/session-key-error.js';
import { ID_CHARACTERS, idCharacterProblem } from '@signalyard/core/internal';

/** What a channel adapter knows about an inbound message. */
export interface InboundRoute {
  /** The channel the message came in on (`telegram`, `discord`, `slack`, `cli`, …). */
  channel: string;
  /** The bot account that received it. Default `'default'`. */
  accountId?: string;
  /** Who it came from: a person (`dm`) or a group-like peer. Absent for local sessions (CLI). */
  peer?: PeerRef;
  /** The Discord guild, when there is one. */
  guildId?: string;
  /** The Slack workspace, when there is one. */
  teamId?: string;
  /** The thread inside a group or channel peer, for threaded sessions. */
  threadId?: string;
}

/** Which tier of binding decided a route; `'default'` when none matched. */
export type MatchedBy = 'peer' | 'guild' | 'team' | 'account' | 'channel' | 'default';

/** The outcome of routing one inbound message. */
export interface ResolvedRoute {
  /** The agent that handles the message. */
  agentId: string;
  /** The channel, normalised (trimmed, lowercase). */
  channel: string;
  /** The account id as given (trimmed), `'default'` when the input had none. */
  accountId: string;
  /** The conversation session the message belongs to. */
  sessionKey: SessionKey;
  /** The agent's main session (`agent:{agent}:main`). */
  mainSessionKey: SessionKey;
  /** The tier of the binding that decided, or `'default'`. */
  matchedBy: MatchedBy;
  /** The binding that decided (from {@link RouteResolver.config}); absent when `matchedBy` is `'default'`. */
  binding?: RouteBinding;
}

/** One binding looked at by {@link RouteResolver.explain}, and why it won or lost. */
export interface ConsideredBinding {
  /** Its position in the config's `bindings`. */
  index: number;
  /** The binding (from {@link RouteResolver.config}). */
  binding: RouteBinding;
  /** Its tier: the most specific field it declares. */
  tier: MatchedBy;
  /** Every field it declares is satisfied by the message. */
  matched: boolean;
  /**
   * Why it won or lost, for people: `won: …`; `matched, but bindings[2] …` (an earlier binding of
   * the same tier, or one of a more specific tier, decided); `no match: team: wants "t1", got none`
   * (every constraint the message fails, `; `-separated).
   */
  reason: string;
}

/** A resolution with its reasons, as returned by {@link RouteResolver.explain}. */
export interface RouteExplanation extends ResolvedRoute {
  /**
   * Every binding on the message's channel (bound to that channel or to any channel), in config
   * order, with whether it matched and why it won or lost. Bindings for other channels are left out.
   */
  considered: ConsideredBinding[];
}

const PEER_KINDS: ReadonlySet<string> = new Set(['dm', 'group', 'channel', 'thread']);
const NO_CANDIDATES: readonly Candidate[] = Object.freeze([]);

function push<K>(map: Map<K, Candidate[]>, key: K, c: Candidate): void {
  const bucket = map.get(key);
  if (bucket === undefined) map.set(key, [c]);
  else bucket.push(c);
}

function badInput(field: string, value: unknown, expected: string): never {
  throw new SessionKeyError({
    problem: field,
    input: value,
    message: `Cannot route inbound message: ${field} ${describeValue(value)}; expected ${expected}`,
  });
}

/**
 * `id` (the canonical form of `raw`), after checking it holds no character an id may not hold
 * (see `forbiddenIdIndex`: NUL, lone surrogates, control and bidirectional characters), so such
 * input is refused here, before any work.
 */
function storable(field: string, raw: string, id: string): string {
  const problem = idCharacterProblem(id);
  if (problem === undefined) return id;
  throw new SessionKeyError({
    problem: `${field} ${problem}`,
    input: raw,
    message: `Cannot route inbound message: ${field} ${describeValue(raw)} ${problem}; expected ${ID_CHARACTERS}`,
  });
}

function optionalId(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') badInput(field, value, 'a string');
  const id = foldId(value);
  if (id === '') badInput(field, value, 'a non-empty id');
  return storable(field, value, id);
}

/**
 * Decides which agent and session an inbound message belongs to, from route bindings, DM scope
 * and identity links.
 *
 * Bindings are **conjunctive** (every declared field must match) and ranked by tier:
 * **peer > guild > team > account > channel > default**; within a tier the first binding in
 * config order wins. Peer bindings compare against the message's raw peer id (bindings are about
 * platform identities); a `group` / `channel` peer binding also covers that peer's threads.
 *
 * The constructor validates its config like the TOML loader (throwing `ConfigError`, code
 * `CONFIG_INVALID`, listing every problem) and indexes the bindings by peer, guild, team,
 * account and channel, so `resolve()` looks candidates up instead of scanning the list. The
 * resolver is immutable.
 *
 * @example
 * ```ts
 * const resolver = new RouteResolver({
 *   session: { identityLinks: { john: ['telegram:123', 'discord:456'] } },
 *   bindings: [
 *     { agentId: 'work', match: { channel: 'slack', accountId: '*', teamId: 'T12345' } },
 *     { agentId: 'general', match: { channel: 'telegram', accountId: '*' } },
 *   ],
 * });
 * const route = resolver.resolve({ channel: 'telegram', peer: { kind: 'dm', id: '123' } });
 * route.agentId;                      // 'general'
 * formatSessionKey(route.sessionKey); // 'agent:general:dm:john'
 * ```
 */
export class RouteResolver {
  /** The validated configuration, defaults filled in, deeply frozen. */
  readonly config: RoutingConfig;
  readonly #dmScope: DmScope;
  readonly #caseSensitive: ReadonlySet<string>;
  readonly #links: LinkIndex;
  readonly #mainKeys = new Map<string, SessionKey>();
  readonly #defaultAgent: string;
  /** channel → peer kind → peer id → candidates (peer tier). */
  readonly #byPeer = new Map<string, Map<string, Map<string, Candidate[]>>>();
  readonly #byGuild = new Map<string, Candidate[]>();
  readonly #byTeam = new Map<string, Candidate[]>();
  readonly #byAccount = new Map<string, Candidate[]>();
  readonly #byChannel = new Map<string, Candidate[]>();
  #anyChannel: Candidate[] = [];
  /** Every binding compiled, in config order (for `explain`). */
  readonly #candidates: Candidate[] = [];

  /**
   * @throws ConfigError (`CONFIG_INVALID`) listing every problem in `config`, each with its path
   *   (`bindings[2].match.peer.id`).
   */
  constructor(config: RoutingConfigInput = {}) {
    this.config = deepFreeze(validateRoutingConfig(config));
    const { session, bindings, defaultAgentId } = this.config;
    this.#dmScope = session.dmScope;
    this.#caseSensitive = caseSensitiveSet(session.caseSensitiveChannels);
    this.#links = session.dmScope === 'main' ? new Map() : buildLinkIndex(session.identityLinks, this.#caseSensitive);
    this.#defaultAgent = defaultAgentId;
    this.#mainKeys.set(defaultAgentId, mainKey(defaultAgentId));
    bindings.forEach((binding, index) => {
      this.#index(binding, index);
    });
  }

  #index(binding: RouteBinding, index: number): void {
    const c = compileBinding(binding, index, this.#caseSensitive);
    const { tier, channel, account, guild, team, peerKind, peerId } = c;
    this.#candidates.push(c);
    if (!this.#mainKeys.has(binding.agentId)) this.#mainKeys.set(binding.agentId, mainKey(binding.agentId));
    switch (tier) {
      case 'peer': {
        // Validation guarantees a specific channel on every peer binding.
        const ch = channel as string;
        let byKind = this.#byPeer.get(ch);
        if (byKind === undefined) this.#byPeer.set(ch, (byKind = new Map<string, Map<string, Candidate[]>>()));
        let byId = byKind.get(peerKind as string);
        if (byId === undefined) byKind.set(peerKind as string, (byId = new Map<string, Candidate[]>()));
        push(byId, peerId as string, c);
        break;
      }
      case 'guild':
        push(this.#byGuild, guild as string, c);
        break;
      case 'team':
        push(this.#byTeam, team as string, c);
        break;
      case 'account':
        push(this.#byAccount, account as string, c);
        break;
      case 'channel':
        if (channel === undefined) this.#anyChannel.push(c);
        else push(this.#byChannel, channel, c);
        break;
    }
  }

  /**
   * Routes one inbound message: the agent, the session key, the agent's main key, and which
   * binding (tier) decided.
   *
   * Session keys: no peer → the agent's main key; a `dm` peer → the linked person's name when an
   * identity link resolves (then the key is per-peer even under `per-channel-peer`; links are
   * ignored under `dmScope = 'main'`), else the peer id, keyed by the DM scope; a `group` /
   * `channel` / `thread` peer → a group key (threaded when `threadId` is given; never linked).
   *
   * @throws SessionKeyError (`SESSION_KEY_INVALID`) when the message cannot be keyed: a missing or
   *   invalid channel, an unknown peer kind, an empty peer, account, guild, team or thread id, or
   *   one containing a NUL character (U+0000) or a lone surrogate (no store could hold its key).
   */
  resolve(input: InboundRoute): ResolvedRoute {
    if (typeof input !== 'object' || (input as InboundRoute | null) === null)
      badInput('input', input, 'an InboundRoute object');
    const rawChannel: unknown = input.channel;
    const channel = typeof rawChannel === 'string' ? normalizeChannel(rawChannel) : undefined;
    if (channel === undefined) badInput('channel', rawChannel, 'a channel name matching [a-z0-9][a-z0-9_.-]*');
    let rawAccount: unknown = input.accountId;
    if (rawAccount === undefined) rawAccount = 'default'; // only absent: null is not an account id
    if (typeof rawAccount !== 'string') badInput('account id', rawAccount, 'a string');
    const account = storable('account id', rawAccount, foldId(rawAccount));
    if (account === '') badInput('account id', rawAccount, 'a non-empty id');
    const guild = optionalId(input.guildId, 'guild id');
    const team = optionalId(input.teamId, 'team id');
    const cs = this.#caseSensitive.has(channel);

    let peerKind: InboundPeerKind | undefined;
    let peerId: string | undefined;
    const peer: unknown = input.peer;
    if (peer !== undefined) {
      if (typeof peer !== 'object' || peer === null) badInput('peer', peer, 'an object { kind, id }');
      const { kind, id } = peer as { kind?: unknown; id?: unknown };
      if (typeof kind !== 'string' || !PEER_KINDS.has(kind))
        badInput('peer kind', kind, '"dm", "group", "channel" or "thread"');
      if (typeof id !== 'string') badInput('peer id', id, 'a string');
      peerKind = kind as InboundPeerKind;
      peerId = storable('peer id', id, canonicalId(id, cs));
      if (peerId === '') badInput('peer id', id, 'a non-empty id');
    }

    const winner = this.#match(channel, account, peerKind, peerId, guild, team);
    const agentId = winner === undefined ? this.#defaultAgent : winner.binding.agentId;
    const main = this.#mainKeys.get(agentId) as SessionKey;

    let sessionKey = main;
    if (peerKind === 'dm') {
      if (this.#dmScope !== 'main') {
        const linked = this.#links.get(channel)?.get(peerId as string);
        sessionKey =
          linked === undefined
            ? directMessageKey(agentId, channel, peerId as string, this.#dmScope)
            : directMessageKey(agentId, channel, linked, 'per-peer');
      }
    } else if (peerKind !== undefined) {
      const rawThread: unknown = input.threadId;
      let threadId: string | undefined;
      if (rawThread !== undefined) {
        if (typeof rawThread !== 'string') badInput('thread id', rawThread, 'a string');
        threadId = storable('thread id', rawThread, canonicalId(rawThread, cs));
        if (threadId === '') badInput('thread id', rawThread, 'a non-empty id');
      }
      sessionKey = groupKey(agentId, channel, peerKind, peerId as string, threadId);
    }

    const accountId = rawAccount.trim();
    if (winner === undefined) {
      return Object.freeze({
        agentId,
        channel,
        accountId,
        sessionKey,
        mainSessionKey: main,
        matchedBy: 'default' as const,
      });
    }
    return Object.freeze({
      agentId,
      channel,
      accountId,
      sessionKey,
      mainSessionKey: main,
      matchedBy: winner.tier,
      binding: winner.binding,
    });
  }

  /**
   * Routes one message like {@link RouteResolver.resolve} — the same decision, the same errors
   * — and says why: every binding on the message's channel, in config order, with its tier,
   * whether it matched, and why it won or lost. For tooling, logs and `signalyard route explain`;
   * `resolve` stays the fast path (this scans every binding).
   *
   * @throws SessionKeyError (`SESSION_KEY_INVALID`) exactly when `resolve` would.
   * @example
   * ```ts
   * const resolver = new RouteResolver({
   *   bindings: [
   *     { agentId: 'general', match: { channel: 'telegram' } },
   *     { agentId: 'vip', match: { channel: 'telegram', peer: { kind: 'dm', id: 'vip' } } },
   *   ],
   * });
   * const why = resolver.explain({ channel: 'telegram', peer: { kind: 'dm', id: '123' } });
   * why.matchedBy;            // 'channel'
   * why.considered[1].reason; // 'no match: peer: wants dm "vip", got dm "123"'
   * ```
   */
  explain(input: InboundRoute): RouteExplanation {
    const snapshot = snapshotInput(input) as InboundRoute;
    const route = this.resolve(snapshot);
    const message = normalizeMessage(snapshot, route.channel, this.#caseSensitive.has(route.channel));
    const considered = Object.freeze(considerBindings(this.#candidates, message, route.binding));
    return Object.freeze({ ...route, considered }) as RouteExplanation;
  }

  /** The winning candidate: the first matching one of the highest tier, found through the indexes. */
  #match(
    channel: string,
    account: string,
    peerKind: InboundPeerKind | undefined,
    peerId: string | undefined,
    guild: string | undefined,
    team: string | undefined,
  ): Candidate | undefined {
    let found: Candidate | undefined;
    if (peerId !== undefined) {
      const bucket = this.#byPeer
        .get(channel)
        ?.get(peerKind as string)
        ?.get(peerId);
      if (
        bucket !== undefined &&
        (found = first(bucket, channel, account, peerKind, peerId, guild, team)) !== undefined
      )
        return found;
    }
    if (guild !== undefined) {
      const bucket = this.#byGuild.get(guild);
      if (
        bucket !== undefined &&
        (found = first(bucket, channel, account, peerKind, peerId, guild, team)) !== undefined
      )
        return found;
    }
    if (team !== undefined) {
      const bucket = this.#byTeam.get(team);
      if (
        bucket !== undefined &&
        (found = first(bucket, channel, account, peerKind, peerId, guild, team)) !== undefined
      )
        return found;
    }
    const byAccount = this.#byAccount.get(account);
    if (
      byAccount !== undefined &&
      (found = first(byAccount, channel, account, peerKind, peerId, guild, team)) !== undefined
    )
      return found;
    // Channel tier: every candidate matches (it declares at most a channel), so the earliest of
    // the channel's first binding and the first any-channel binding wins.
    const specific = (this.#byChannel.get(channel) ?? NO_CANDIDATES)[0];
    const any = this.#anyChannel[0];
    if (specific === undefined) return any;
    return any === undefined || specific.index < any.index ? specific : any;
  }
}

/** The first candidate in `bucket` (config order) whose every declared constraint holds. */
function first(
  bucket: readonly Candidate[],
  channel: string,
  account: string,
  peerKind: InboundPeerKind | undefined,
  peerId: string | undefined,
  guild: string | undefined,
  team: string | undefined,
): Candidate | undefined {
  for (let i = 0; i < bucket.length; i++) {
    const c = bucket[i] as Candidate;
    if (
      (c.channel === undefined || c.channel === channel) &&
      (c.account === undefined || c.account === account) &&
      (c.guild === undefined || c.guild === guild) &&
      (c.team === undefined || c.team === team) &&
      (c.peerId === undefined || (c.peerKind === peerKind && c.peerId === peerId))
    ) {
      return c;
    }
  }
  return undefined;
}

/**
 * Resolves one message against a configuration: `new RouteResolver(config).resolve(input)`.
 * Builds (and validates) a resolver on every call; keep a {@link RouteResolver} for repeated use.
 *
 * @throws ConfigError for an invalid config; SessionKeyError for an input that cannot be keyed.
 * @example
 * ```ts
 * resolveRoute({}, { channel: 'cli' }).sessionKey;  // { kind: 'main', agentId: 'main', mainKey: 'main' }
 * ```
 */
export function resolveRoute(config: RoutingConfigInput, input: InboundRoute): ResolvedRoute {
  return new RouteResolver(config).resolve(input);
}
