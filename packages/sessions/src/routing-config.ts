import { ConfigError, describeValue, type ConfigProblem } from '@signalyard/core';
import {
  configProblemsFromZod,
  isReservedName,
  reservedNameProblem,
  type ZodProblemOptions,
} from '@signalyard/core/internal';
import { z } from 'zod';
import { canonicalId, foldId, isCanonicalAgentId, normalizeAgentId, normalizeChannel } from './normalize.js';
import type { DmScope } from './session-key.js';
import { idCharacterProblem } from '@signalyard/core/internal';

/** The kind of peer a message comes from, or a binding targets: a person (`dm`) or a group-like peer. */
export type InboundPeerKind = 'dm' | 'group' | 'channel' | 'thread';

/** A peer: its kind and its platform id. */
export interface PeerRef {
  /** A person (`dm`), or a group, channel or thread. */
  kind: InboundPeerKind;
  /** The peer's id on its channel. */
  id: string;
}

/**
 * What a route binding requires of a message. **Every** declared field must be satisfied
 * (conjunctive). `channel` and `accountId` omitted or `'*'` mean any; channel, account, guild and
 * team ids compare trimmed and case-insensitively; peer ids case-insensitively except on
 * case-sensitive channels. A peer binding must name a channel.
 */
export interface MatchRule {
  /** The channel (`telegram`, …); `*` or absent: any. */
  channel?: string;
  /** The bot account; `*`: any; absent: the default account. */
  accountId?: string;
  /** The exact peer (peer tier). */
  peer?: PeerRef;
  /** The Discord guild (guild tier). */
  guildId?: string;
  /** The Slack team (team tier). */
  teamId?: string;
}

/** Routes messages matching `match` to the agent `agentId` (a canonical agent id). */
export interface RouteBinding {
  /** The agent that gets the messages this binding matches. */
  agentId: string;
  /** What a message must match; every field given must match. */
  match: MatchRule;
}

/** How sessions are keyed: the DM scope, identity links and case-sensitive channels. */
export interface SessionConfig {
  /** How DMs are grouped into sessions. Default `'per-peer'`. */
  dmScope: DmScope;
  /** Canonical person name → `channel:id` entries (`telegram:123456`, `matrix:@alice:example.org`). */
  identityLinks: Record<string, string[]>;
  /** Channels whose peer ids are case-sensitive (e.g. `matrix`, `signal`): their ids are never case-folded. */
  caseSensitiveChannels: string[];
}

/**
 * A validated routing configuration with every field present (the form `parseRoutingConfig`
 * returns and `RouteResolver` keeps). Values are as written; defaults are filled in.
 */
export interface RoutingConfig {
  /** The agent that handles messages no binding matches. Default `'main'`. */
  defaultAgentId: string;
  /** How sessions are keyed. */
  session: SessionConfig;
  /** In config order: within a tier, the first matching binding wins. */
  bindings: RouteBinding[];
}

/**
 * Every property optional, recursively; arrays become readonly arrays of deep-partial items.
 * (The schema still requires what has no default, such as a binding's `agentId`.)
 */
export type DeepPartial<T> = T extends readonly (infer U)[]
  ? readonly DeepPartial<U>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/**
 * A routing configuration as written in code: every field optional. Defaults
 * (`defaultAgentId: 'main'`, `dmScope: 'per-peer'`, no links, no bindings) are filled in; what
 * has no default (a binding's `agentId` and `match`, a peer's `kind` and `id`) is required by
 * validation, which reports every missing or invalid field with its path.
 */
export type RoutingConfigInput = DeepPartial<RoutingConfig>;

type Ctx = z.RefinementCtx;
type PathKey = string | number;

function issue(ctx: Ctx, path: PathKey[], message: string): void {
  ctx.addIssue({ code: 'custom', message, path });
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

const agentIdSchema = z.string().superRefine((value, ctx) => {
  if (!isCanonicalAgentId(value)) {
    const fixed = normalizeAgentId(value);
    issue(
      ctx,
      [],
      value.trim() === '' || fixed !== value
        ? `agent id ${describeValue(value)} is not canonical: write ${describeValue(fixed)} (lowercase [a-z0-9_-], at most 64 characters)`
        : `agent id ${describeValue(value)} is not canonical (lowercase [a-z0-9_-], at most 64 characters)`,
    );
  }
});

const channelSchema = z.string().superRefine((value, ctx) => {
  if (normalizeChannel(value) === undefined) {
    issue(
      ctx,
      [],
      `channel ${describeValue(value)} is not a channel name (letters, digits, "_", "." and "-", starting with a letter or digit)`,
    );
  }
});

const channelOrWildcardSchema = z.string().superRefine((value, ctx) => {
  if (value.trim() !== '*' && normalizeChannel(value) === undefined) {
    issue(ctx, [], `channel ${describeValue(value)} is not a channel name or "*"`);
  }
});

function idSchema(what: string): z.ZodString {
  return z.string().superRefine((value, ctx) => {
    const id = canonicalId(value, true);
    const forbidden = idCharacterProblem(id);
    if (id === '') issue(ctx, [], `${what} must not be empty`);
    else if (forbidden !== undefined) issue(ctx, [], `${what} ${describeValue(value)} ${forbidden}`);
  });
}

const peerSchema = z.strictObject({
  kind: z.enum(['dm', 'group', 'channel', 'thread'], {
    error: (iss) =>
      iss.input === undefined
        ? 'a peer needs a kind: "dm", "group", "channel" or "thread"'
        : `peer kind ${describeValue(iss.input)} is not "dm", "group", "channel" or "thread"`,
  }),
  id: idSchema('peer id'),
});

const matchSchema = z
  .strictObject({
    channel: channelOrWildcardSchema.optional(),
    accountId: idSchema('account id').optional(),
    peer: peerSchema.optional(),
    guildId: idSchema('guild id').optional(),
    teamId: idSchema('team id').optional(),
  })
  .superRefine(
    (value, ctx) => {
      // Runs even when other fields are invalid, so read defensively.
      const match = asRecord(value);
      if (match?.peer === undefined) return;
      const channel = str(match.channel);
      if (channel === undefined && match.channel !== undefined) return; // reported as a type error
      if (channel === undefined || channel.trim() === '*') {
        const id = str(asRecord(match.peer)?.id);
        issue(
          ctx,
          ['channel'],
          `a peer binding needs a channel: without one it would match ${id === undefined ? 'its peer' : `peer ${describeValue(id)}`} on every channel`,
        );
      }
    },
    { when: () => true },
  );

const bindingSchema = z.strictObject({
  agentId: agentIdSchema,
  match: matchSchema,
});

/** Identity links: a record validated by hand so `__proto__` / `constructor` never become keys. */
const identityLinksSchema = z
  .custom<Record<string, string[]>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
    error: (iss) => `identity links must be a table of name = ["channel:id", …], got ${describeValue(iss.input)}`,
  })
  .superRefine((links, ctx) => {
    for (const name of Object.keys(links)) {
      const reserved = reservedNameProblem(name, 'an identity-link name');
      if (reserved !== undefined) {
        issue(ctx, [name], reserved);
        continue;
      }
      const id = canonicalId(name, false);
      const forbidden = idCharacterProblem(id);
      if (id === '') issue(ctx, [name], 'an identity-link name must not be empty');
      else if (forbidden !== undefined) issue(ctx, [name], `identity-link name ${describeValue(name)} ${forbidden}`);
      const entries: unknown = links[name];
      if (!Array.isArray(entries)) {
        issue(ctx, [name], `expected a list of "channel:id" entries, got ${describeValue(entries)}`);
        continue;
      }
      entries.forEach((entry: unknown, i) => {
        const problem = linkEntryProblem(entry);
        if (problem !== undefined) issue(ctx, [name, i], problem);
      });
    }
  })
  .transform((links) => {
    const out: Record<string, string[]> = {};
    for (const name of Object.keys(links)) {
      if (!isReservedName(name)) out[name] = [...(links[name] as string[])];
    }
    return out;
  });

/** Why `entry` is not a valid `channel:id` identity-link entry, or `undefined` when it is. */
function linkEntryProblem(entry: unknown): string | undefined {
  if (typeof entry !== 'string')
    return `an identity-link entry must be a "channel:id" string, got ${describeValue(entry)}`;
  const colon = entry.indexOf(':');
  if (colon < 0) {
    return `identity-link entry ${describeValue(entry)} has no channel: write "channel:id" (a bare id would link that id on every channel)`;
  }
  if (normalizeChannel(entry.slice(0, colon)) === undefined) {
    return `identity-link entry ${describeValue(entry)} does not start with a channel name before the first ":"`;
  }
  const id = canonicalId(entry.slice(colon + 1), true);
  if (id === '') return `identity-link entry ${describeValue(entry)} has an empty id after the channel`;
  const forbidden = idCharacterProblem(id);
  if (forbidden !== undefined) return `identity-link entry ${describeValue(entry)}: its id ${forbidden}`;
  return undefined;
}

/** Splits a valid entry at the first `:` into its channel and its id (folded unless the channel is case-sensitive). */
export function splitLinkEntry(
  entry: string,
  caseSensitiveChannels: ReadonlySet<string>,
): { channel: string; id: string } | undefined {
  const colon = entry.indexOf(':');
  if (colon < 0) return undefined;
  const channel = normalizeChannel(entry.slice(0, colon));
  if (channel === undefined) return undefined;
  const id = canonicalId(entry.slice(colon + 1), caseSensitiveChannels.has(channel));
  return id === '' ? undefined : { channel, id };
}

const sessionSchema = z.strictObject({
  dmScope: z
    .enum(['main', 'per-peer', 'per-channel-peer'], {
      error: (iss) => `DM scope ${describeValue(iss.input)} is not "main", "per-peer" or "per-channel-peer"`,
    })
    .default('per-peer'),
  identityLinks: identityLinksSchema.default(() => ({})),
  caseSensitiveChannels: z.array(channelSchema).default(() => []),
});

/** The set of case-sensitive channels of a (possibly invalid) config, normalised. */
export function caseSensitiveSet(channels: unknown): Set<string> {
  const out = new Set<string>();
  if (Array.isArray(channels)) {
    for (const c of channels) {
      const n = typeof c === 'string' ? normalizeChannel(c) : undefined;
      if (n !== undefined) out.add(n);
    }
  }
  return out;
}

/**
 * Cross-field checks, run even when other parts are invalid (so every problem is reported at
 * once). Reads the partly parsed value defensively.
 */
function crossChecks(value: unknown, ctx: Ctx): void {
  const root = asRecord(value);
  if (root === undefined) return;
  const session = asRecord(root.session);
  const cs = caseSensitiveSet(session?.caseSensitiveChannels);

  // Identity links: one canonical name per entry, one declaration per canonical name.
  const links = asRecord(session?.identityLinks);
  if (links !== undefined) {
    const owners = new Map<string, string>(); // "channel:id" → canonical name
    const names = new Map<string, string>(); // canonical name → name as written
    for (const name of Object.keys(links)) {
      if (isReservedName(name)) continue;
      const canonical = canonicalId(name, false);
      if (canonical === '') continue;
      const earlier = names.get(canonical);
      if (earlier !== undefined) {
        issue(
          ctx,
          ['session', 'identityLinks', name],
          `identity-link name ${describeValue(name)} is the same person as ${describeValue(earlier)} (both normalise to ${describeValue(canonical)}): merge them`,
        );
        continue;
      }
      names.set(canonical, name);
      const entries = links[name];
      if (!Array.isArray(entries)) continue;
      entries.forEach((entry: unknown, i) => {
        const split = typeof entry === 'string' ? splitLinkEntry(entry, cs) : undefined;
        if (split === undefined) return;
        const k = `${split.channel}:${split.id}`;
        const owner = owners.get(k);
        if (owner === undefined) owners.set(k, canonical);
        else if (owner !== canonical) {
          issue(
            ctx,
            ['session', 'identityLinks', name, i],
            `${describeValue(entry)} is already linked to ${describeValue(owner)}: one platform identity can belong to one person only`,
          );
        }
      });
    }
  }

  // Bindings: the second of two bindings with the same match (and so the same tier) can never win.
  const bindings = root.bindings;
  if (!Array.isArray(bindings)) return;
  const seen = new Map<string, number>();
  bindings.forEach((b: unknown, i) => {
    const match = asRecord(asRecord(b)?.match);
    if (match === undefined) return;
    const signature = matchSignature(match, cs);
    if (signature === undefined) return;
    const first = seen.get(signature);
    if (first === undefined) seen.set(signature, i);
    else
      issue(
        ctx,
        ['bindings', i],
        `this binding can never win: bindings[${first}] has the same match (so the same tier) and comes first`,
      );
  });
}

/** A normalised description of a match rule (undefined when the rule is malformed). */
function matchSignature(match: Record<string, unknown>, cs: ReadonlySet<string>): string | undefined {
  const wild = (v: unknown): string | undefined => {
    if (v === undefined) return '*';
    const s = str(v);
    if (s === undefined) return undefined;
    return s.trim() === '*' ? '*' : foldId(s);
  };
  const channel = wild(match.channel);
  const account = wild(match.accountId);
  const guild = match.guildId === undefined ? '' : str(match.guildId);
  const team = match.teamId === undefined ? '' : str(match.teamId);
  if (channel === undefined || account === undefined || guild === undefined || team === undefined) return undefined;
  let peer = '';
  if (match.peer !== undefined) {
    const p = asRecord(match.peer);
    const kind = str(p?.kind);
    const id = str(p?.id);
    if (kind === undefined || id === undefined) return undefined;
    peer = `${kind}\u0000${canonicalId(id, cs.has(channel))}`;
  }
  return JSON.stringify([channel, account, peer, foldId(guild), foldId(team)]);
}

/**
 * The zod schema of a routing configuration in code form ({@link RoutingConfigInput} in,
 * {@link RoutingConfig} out, defaults filled in). Both `parseRoutingConfig` (after mapping the
 * TOML's snake_case keys) and `RouteResolver` validate with it. It rejects unknown keys,
 * non-canonical agent ids, peers without kind or id, peer bindings without a channel,
 * identity-link entries that are not `channel:id`, one entry linked to two names, reserved
 * names (`__proto__`, `constructor`), and bindings made dead by an identical earlier one.
 *
 * @example
 * ```ts
 * const result = routingConfigSchema.safeParse({ bindings: [{ agentId: 'Work', match: { channel: 'slack' } }] });
 * result.success;  // false: "Work" is not canonical
 * ```
 */
export const routingConfigSchema: z.ZodType<RoutingConfig, RoutingConfigInput> = z
  .strictObject({
    defaultAgentId: agentIdSchema.default('main'),
    session: sessionSchema.prefault({}),
    bindings: z.array(bindingSchema).default(() => []),
  })
  .superRefine(crossChecks, { when: () => true });

// ------------------------------------------------------------------------ problems & paths

function issueMessage(iss: z.core.$ZodIssue): string {
  switch (iss.code) {
    case 'invalid_type':
      return iss.input === undefined
        ? `is required (expected ${iss.expected})`
        : `expected ${iss.expected === 'object' ? 'a table' : iss.expected}, got ${describeValue(iss.input)}`;
    default:
      return iss.message;
  }
}

/**
 * The routing schema's zod issues as config problems (core's one conversion: one problem per
 * unknown key, paths printed alike everywhere), with this package's wording for type errors.
 * `options.mapPath` renames the code-form path (e.g. to the TOML's keys).
 */
export function routingProblems(issues: readonly z.core.$ZodIssue[], options: ZodProblemOptions = {}): ConfigProblem[] {
  return configProblemsFromZod(issues, { message: issueMessage, ...options });
}

/**
 * Validates a routing configuration given in code and fills in defaults.
 *
 * @throws ConfigError (`CONFIG_INVALID`) listing every problem with its path (`bindings[2].match.peer.id`).
 */
export function validateRoutingConfig(input: unknown): RoutingConfig {
  const result = routingConfigSchema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  throw new ConfigError({ problems: routingProblems(result.error.issues) });
}
