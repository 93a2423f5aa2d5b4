import { compileBinding, type BindingTier, type Candidate } from './binding-candidate.js';
import type { MatchedBy } from './route-resolver.js';
import { caseSensitiveSet, validateRoutingConfig, type RoutingConfigInput } from './routing-config.js';
import { parseRoutingConfig } from './routing-toml.js';
import { lineOf, locateTomlKeys } from './toml-key-lines.js';

/**
 * A routing configuration that is valid but probably not what was meant, found by
 * {@link lintRoutingConfig} and {@link lintRoutingToml}. It has the fields of a `ConfigProblem`
 * (`path`, `message`, `line`), so tools print warnings and problems alike.
 */
export interface RoutingLintWarning {
  /** What was found: `'shadowed_binding'`, a binding that can never win. */
  readonly kind: 'shadowed_binding';
  /** The dead binding: `bindings[3]` (`routing.bindings[3]` from {@link lintRoutingToml}). */
  readonly path: string;
  /** The 1-based line of the dead binding in the TOML ({@link lintRoutingToml} only). */
  readonly line?: number;
  /** What is wrong and why, naming the binding that shadows it. */
  readonly message: string;
  /** The dead binding's index in `bindings`. */
  readonly index: number;
  /** The index of the first earlier binding that wins every message the dead one matches. */
  readonly shadowedBy: number;
  /** The tier both bindings are in. */
  readonly tier: Exclude<MatchedBy, 'default'>;
}

/** The fields a binding can declare, one bit each. */
const FIELDS = ['channel', 'account', 'guild', 'team', 'peer'] as const;
type Field = (typeof FIELDS)[number];
const BIT: Readonly<Record<Field, number>> = { channel: 1, account: 2, guild: 4, team: 8, peer: 16 };
/** The field that puts a binding in its tier: a subset keeps the tier only if it keeps that field. */
const TIER_FIELD: Readonly<Record<BindingTier, number>> = { peer: 16, guild: 4, team: 8, account: 2, channel: 0 };

function declared(c: Candidate): number {
  return (
    (c.channel === undefined ? 0 : BIT.channel) |
    (c.account === undefined ? 0 : BIT.account) |
    (c.guild === undefined ? 0 : BIT.guild) |
    (c.team === undefined ? 0 : BIT.team) |
    (c.peerId === undefined ? 0 : BIT.peer)
  );
}

/** The match of `c` restricted to the fields in `mask`, as a map key (fields outside the mask are "any"). */
function signature(c: Candidate, mask: number): string {
  const pick = (field: Field, value: string | undefined): string | null =>
    (mask & BIT[field]) === 0 ? null : (value as string);
  return JSON.stringify([
    pick('channel', c.channel),
    pick('account', c.account),
    pick('guild', c.guild),
    pick('team', c.team),
    (mask & BIT.peer) === 0 ? null : [c.peerKind, c.peerId],
  ]);
}

const FIELD_NAMES: Readonly<Record<Field, string>> = {
  channel: 'a channel',
  account: 'an account',
  guild: 'a guild',
  team: 'a team',
  peer: 'a peer',
};

function shadowMessage(shadowedBy: number, tier: BindingTier, extra: number): string {
  const fields = FIELDS.filter((f) => (extra & BIT[f]) !== 0).map((f) => FIELD_NAMES[f]);
  return (
    `this binding can never win: bindings[${shadowedBy}] comes first at the same tier (${tier}) and matches ` +
    `every message this one matches (it does not require ${fields.join(' or ')})`
  );
}

/**
 * Finds bindings that can never win: those **strictly shadowed** by an earlier binding of the
 * same tier whose match is broader (it declares a subset of the later binding's fields, with the
 * same values). Every message the later binding matches, the earlier one matches too, and within
 * a tier the first binding in config order wins — so the later one is dead configuration. (Two
 * identical bindings are not a warning but a config error: validation rejects them.)
 *
 * Runs in time linear in the number of bindings.
 *
 * @throws ConfigError (`CONFIG_INVALID`) when `config` is invalid, as the `RouteResolver` constructor does.
 * @example
 * ```ts
 * const warnings = lintRoutingConfig({
 *   bindings: [
 *     { agentId: 'general', match: { channel: '*' } },
 *     { agentId: 'support', match: { channel: 'telegram' } }, // never wins: bindings[0] takes its messages first
 *   ],
 * });
 * warnings[0].path;       // 'bindings[1]'
 * warnings[0].shadowedBy; // 0
 * ```
 */
export function lintRoutingConfig(config: RoutingConfigInput): RoutingLintWarning[] {
  const valid = validateRoutingConfig(config);
  const cs = caseSensitiveSet(valid.session.caseSensitiveChannels);
  const candidates = valid.bindings.map((b, i) => compileBinding(b, i, cs));
  // The first binding of every exact match (validation guarantees no two are identical).
  const first = new Map<string, number>();
  for (const c of candidates) {
    const key = signature(c, declared(c));
    if (!first.has(key)) first.set(key, c.index);
  }
  const warnings: RoutingLintWarning[] = [];
  for (const c of candidates) {
    const mask = declared(c);
    const required = TIER_FIELD[c.tier];
    let shadowedBy = -1;
    let shadowMask = 0;
    // Every proper subset of the declared fields that keeps the tier: at most 2^5 lookups.
    for (let sub = (mask - 1) & mask; ; sub = (sub - 1) & mask) {
      if ((sub & required) === required) {
        const earlier = first.get(signature(c, sub));
        if (earlier !== undefined && earlier < c.index && (shadowedBy < 0 || earlier < shadowedBy)) {
          shadowedBy = earlier;
          shadowMask = sub;
        }
      }
      if (sub === 0) break;
    }
    if (shadowedBy >= 0) {
      warnings.push({
        kind: 'shadowed_binding',
        path: `bindings[${c.index}]`,
        message: shadowMessage(shadowedBy, c.tier, mask & ~shadowMask),
        index: c.index,
        shadowedBy,
        tier: c.tier,
      });
    }
  }
  return warnings;
}

/**
 * {@link lintRoutingConfig} for a routing TOML document: the same warnings, with TOML paths
 * (`routing.bindings[3]`) and the line of each dead binding (its `[[routing.bindings]]` header,
 * or its item in an inline array).
 *
 * @throws ConfigError (`CONFIG_INVALID`) listing every problem, exactly as `parseRoutingConfig` does.
 * @example
 * ```ts
 * const warnings = lintRoutingToml(await readFile('routing.toml', 'utf8'));
 * for (const w of warnings) console.warn(`routing.toml:${w.line}: ${w.path}: ${w.message}`);
 * ```
 */
export function lintRoutingToml(toml: string): RoutingLintWarning[] {
  const warnings = lintRoutingConfig(parseRoutingConfig(toml));
  if (warnings.length === 0) return warnings;
  const lines = locateTomlKeys(toml.startsWith('\uFEFF') ? toml.slice(1) : toml);
  return warnings.map((w) => {
    const path = ['routing', 'bindings', w.index] as const;
    const line = lineOf(lines, path);
    const located = { ...w, path: `routing.bindings[${w.index}]` };
    return line === undefined ? located : { ...located, line };
  });
}
