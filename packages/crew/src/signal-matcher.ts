import { describeValue } from '@signalyard/core';
import { CrewArgumentError } from './errors/crew-argument-error.js';
import { UNSURE, YES, anchorGroup, anchorIndex, caselessAt, caselessInPlace, exactAt } from './signal-anchor.js';
import type { AnchorAnswer, AnchorGroup } from './signal-anchor.js';
import {
  BRACKET_WINDOW,
  assertContent,
  invalidSignalError,
  isBracketedSignal,
  normalizeBracketSpan,
  walkBracketSpans,
} from './signal-normalize.js';

/** Per-reply state of a signal in `SignalMatcher.hits`: not (yet) found, found, or to search. */
const NONE = 0;
const HIT = 1;
const SEARCH = 2;

/** Everything about a list of signals that matching a reply needs, computed once. */
interface MatchPlan {
  readonly lower: readonly string[];
  /** 1 where lowercasing changes the signal. */
  readonly lowerChanges: Uint8Array;
  /** 1 where the signal is ASCII. */
  readonly ascii: Uint8Array;
  /** Lowercase → indexes of the bracketed signals found by the span walk at levels 1–2. */
  readonly byLower: ReadonlyMap<string, readonly number[]>;
  /** Normalised key → indexes of the bracketed signals (level 3). */
  readonly byKey: ReadonlyMap<string, readonly number[]>;
  /** How many signals take part in level 3. */
  readonly bracketed: number;
  readonly groups: readonly AnchorGroup[];
  /** SEARCH for the signals only a substring search finds (no anchor); NONE otherwise. */
  readonly initial: Uint8Array;
}

function addTo(map: Map<string, number[]>, key: string, i: number): void {
  const existing = map.get(key);
  if (existing === undefined) map.set(key, [i]);
  else existing.push(i);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

function compile(signals: readonly string[]): MatchPlan {
  const n = signals.length;
  const lower: string[] = [];
  const lowerChanges = new Uint8Array(n);
  const ascii = new Uint8Array(n);
  const initial = new Uint8Array(n);
  const byLower = new Map<string, number[]>();
  const byKey = new Map<string, number[]>();
  const anchored = new Map<string, number[]>();
  let bracketed = 0;
  for (let i = 0; i < n; i++) {
    const signal = signals[i] as string;
    const l = signal.toLowerCase();
    lower.push(l);
    if (signal === '') continue; // never matches
    if (l !== signal) lowerChanges[i] = 1;
    if (isAscii(signal)) ascii[i] = 1;
    const spanned = isBracketedSignal(signal);
    if (spanned) {
      bracketed++;
      addTo(byKey, normalizeBracketSpan(signal), i);
    }
    // A bracketed signal whose lowercase fits the window is some bracket span of the reply, or
    // that span lowercased (lowercasing never shortens a string and keeps brackets and their
    // places), so the span walk finds it at levels 1–2 too. Any other needs a search.
    if (spanned && l.length <= BRACKET_WINDOW) addTo(byLower, l, i);
    else {
      const a = anchorIndex(signal);
      if (a === -1) initial[i] = SEARCH;
      else addTo(anchored, signal.charAt(a), i);
    }
  }
  const groups: AnchorGroup[] = [];
  for (const [anchor, members] of anchored) groups.push(anchorGroup(anchor, members, signals, lower));
  return { lower, lowerChanges, ascii, byLower, byKey, bracketed, groups, initial };
}

/**
 * A compiled list of signals, matched against replies with the exact semantics of
 * {@link matchLevel}: a signal matches when any of its three levels hits.
 *
 * Everything about the signals is computed once, at construction; build one per agent and reuse
 * it for every reply. Per reply the work is one pass over the reply, not one per signal:
 *
 * - bracketed signals (`[` … `]`, no inner bracket) are found at all three levels by one walk
 *   over the reply's bracket spans (from `indexOf('[')`): each span is lowercased and
 *   normalised once and looked up in two maps;
 * - other signals are searched from an *anchor*, a rare ASCII non-letter of theirs (`[`, `:`,
 *   `#`, …): one native `indexOf` pass per distinct anchor, a short comparison at each hit, and
 *   no lowercasing of the reply (around an ASCII anchor the lowercased reply reads as the reply
 *   ASCII-lowercased);
 * - only a signal without an anchor (letters and spaces only), one next to non-ASCII text, or
 *   one whose anchor is everywhere (past a budget linear in the reply) falls back to native
 *   `includes` over the reply and its lowercase, as {@link matchLevel} does.
 *
 * Linear in the reply's length, no regular expression over the reply.
 *
 * Accepts any strings: levels 1–2 apply to all non-empty ones, level 3 to bracketed ones
 * without inner brackets, and the empty signal never matches (as with `signalMatches`), so
 * `matchAll` lists exactly the signals for which `signalMatches(signal, content)` is true.
 * (`isValidSignal` is the stricter format the crew config enforces.)
 * A matcher is immutable and may be shared.
 *
 * @example
 * ```ts
 * const matcher = new SignalMatcher(['[DONE]', '[ASK_STUDENT]', '[ROUTE EXECUTOR]']);
 * matcher.matchAll('ok [ask_student] then [ Route   Executor ]');  // [1, 2]
 * matcher.first('ok [ask_student] then [ Route   Executor ]');     // 1
 * matcher.first('nothing to see');                                // undefined
 * ```
 */
export class SignalMatcher {
  /** The signals, in the order given to the constructor (indexes refer to this list). */
  readonly signals: readonly string[];
  private readonly plan: MatchPlan;
  // Per-call scratch state (matching is synchronous, so one set per matcher suffices).
  private readonly hits: Uint8Array;
  private reply = '';
  private pending = 0;
  private budget = 0;
  private readonly visit: (start: number, close: number) => boolean;

  /**
   * @param signals - the signals, e.g. an agent's routing signals in config order.
   * @throws CrewArgumentError `CREW_SIGNAL_INVALID` when `signals` is not an array or holds
   * anything but strings.
   */
  constructor(signals: readonly string[]) {
    if (!Array.isArray(signals)) {
      throw new CrewArgumentError({
        code: 'CREW_SIGNAL_INVALID',
        message: `Invalid signals ${describeValue(signals)} given to SignalMatcher: expected an array of strings`,
        value: signals,
      });
    }
    const list: string[] = [];
    for (let i = 0; i < signals.length; i++) {
      const signal: unknown = signals[i];
      if (typeof signal !== 'string') throw invalidSignalError(signal, `at index ${i} given to SignalMatcher`);
      list.push(signal);
    }
    this.signals = Object.freeze(list);
    this.plan = compile(list);
    this.hits = new Uint8Array(list.length);
    this.visit = (start, close) => {
      const span = this.reply.slice(start, close + 1);
      return (
        this.mark(this.plan.byLower.get(span.toLowerCase())) ||
        this.mark(this.plan.byKey.get(normalizeBracketSpan(span)))
      );
    };
  }

  /**
   * Indexes (into the constructor's list) of every signal that matches `content`, in list
   * order. Empty when none does.
   *
   * @throws CrewArgumentError `CREW_CONTENT_INVALID` when `content` is not a string.
   */
  matchAll(content: string): number[] {
    assertContent(content);
    const out: number[] = [];
    const n = this.signals.length;
    if (n === 0) return out;
    this.run(content);
    const hits = this.hits;
    for (let i = 0; i < n; i++) if (hits[i] === HIT) out.push(i);
    return out;
  }

  /**
   * The index of the first signal (in list order) that matches `content`, or `undefined`.
   * Same result as `matchAll(content)[0]`, without building the list.
   *
   * @throws CrewArgumentError `CREW_CONTENT_INVALID` when `content` is not a string.
   */
  first(content: string): number | undefined {
    assertContent(content);
    const n = this.signals.length;
    if (n === 0) return undefined;
    this.run(content);
    const hits = this.hits;
    for (let i = 0; i < n; i++) if (hits[i] === HIT) return i;
    return undefined;
  }

  /** Leaves `hits[i] === HIT` exactly for the signals that match `content`. */
  private run(content: string): void {
    const plan = this.plan;
    this.hits.set(plan.initial);
    if (plan.bracketed > 0) {
      this.reply = content;
      this.pending = plan.bracketed;
      walkBracketSpans(content, this.visit);
      this.reply = '';
    }
    const groups = plan.groups;
    for (let g = 0; g < groups.length; g++) this.scan(content, groups[g] as AnchorGroup);
    this.search(content);
  }

  /** Marks `indexes` as hits; true once every bracketed signal is (the span walk may stop). */
  private mark(indexes: readonly number[] | undefined): boolean {
    if (indexes === undefined) return false;
    const hits = this.hits;
    for (let j = 0; j < indexes.length; j++) {
      const i = indexes[j] as number;
      // Only bracketed signals are listed, and the walk runs first: each one is counted once.
      if (hits[i] !== HIT) {
        hits[i] = HIT;
        this.pending--;
      }
    }
    return this.pending === 0;
  }

  /**
   * Levels 1–2 of one anchor group, from every occurrence of the anchor in `content`. A member
   * next to non-ASCII text is left to {@link search}, and so is every unresolved member once the
   * comparisons pass a budget linear in the reply (a reply made of the anchor character).
   */
  private scan(content: string, group: AnchorGroup): void {
    const hits = this.hits;
    const members = group.members;
    let alive = 0;
    for (let m = 0; m < members.length; m++) if (hits[members[m] as number] !== HIT) alive++;
    if (alive === 0) return;
    this.budget = (content.length >> 2) + 64;
    let p = content.indexOf(group.anchor);
    if (p === -1) return;
    // ASCII members are compared in place: see `caselessInPlace`. One read picks the candidates.
    const inPlace = group.offset !== 0;
    for (; p !== -1; p = content.indexOf(group.anchor, p + 1)) {
      alive = inPlace
        ? this.candidates(content, p, group, alive)
        : this.each(content, p, group, 0, members.length, alive);
      if (alive <= 0) return;
    }
  }

  /**
   * Compares the members worth comparing at the occurrence `p`: the non-ASCII ones, and the
   * ASCII ones whose character at the group's offset is the reply's there, lowercased.
   */
  private candidates(content: string, p: number, group: AnchorGroup, alive: number): number {
    alive = this.each(content, p, group, -1, group.others.length, alive);
    const q = p + group.offset;
    if (alive <= 0 || q < 0 || q >= content.length) return alive; // no ASCII member fits here
    let c = content.charCodeAt(q);
    if (c >= 0x80) return this.each(content, p, group, 0, group.members.length, alive);
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    const { start, byChar, members, at } = group;
    const hits = this.hits;
    for (let b = start[c] as number, end = start[c + 1] as number; b < end; b++) {
      const m = byChar[b] as number;
      const i = members[m] as number;
      if (hits[i] === HIT) continue;
      if (--this.budget < 0) return this.giveUp(group);
      const s = p - (at[m] as number);
      let answer = caselessInPlace(content, s, this.plan.lower[i] as string);
      if (answer === UNSURE && exactAt(content, p, this.signals[i] as string, at[m] as number)) answer = YES;
      if (answer === YES) {
        hits[i] = HIT;
        if (--alive === 0) return 0;
      } else if (answer === UNSURE) hits[i] = SEARCH;
    }
    return alive;
  }

  /**
   * Compares members `from..to` at the occurrence `p`: positions into `members`, or with
   * `from === -1` positions `0..to` into `others`. Returns how many are still unresolved.
   */
  private each(content: string, p: number, group: AnchorGroup, from: number, to: number, alive: number): number {
    const hits = this.hits;
    const { members, at, atLower, others } = group;
    for (let k = Math.max(from, 0); k < to; k++) {
      const m = from === -1 ? (others[k] as number) : k;
      const i = members[m] as number;
      if (hits[i] === HIT) continue;
      if (--this.budget < 0) return this.giveUp(group);
      const answer = this.at(content, p, i, at[m] as number, atLower[m] as number);
      if (answer === YES) {
        hits[i] = HIT;
        if (--alive === 0) return 0;
      } else if (answer === UNSURE) hits[i] = SEARCH;
    }
    return alive;
  }

  /** Leaves the group's unresolved members to the substring search; returns -1. */
  private giveUp(group: AnchorGroup): number {
    const { members } = group;
    for (let k = 0; k < members.length; k++)
      if (this.hits[members[k] as number] !== HIT) this.hits[members[k] as number] = SEARCH;
    return -1;
  }

  /** Whether signal `i` matches at level 1 or 2 with its anchor on the reply's anchor at `p`. */
  private at(content: string, p: number, i: number, at: number, atLower: number): AnchorAnswer {
    const plan = this.plan;
    const signal = this.signals[i] as string;
    if (plan.ascii[i] === 1) {
      // Where caselessAt is sure, it covers level 1 too: the compared characters are ASCII, and
      // an ASCII signal present there is present ASCII-lowercased in the lowercased reply.
      const answer = caselessAt(content, p, plan.lower[i] as string, at);
      return answer === UNSURE && exactAt(content, p, signal, at) ? YES : answer;
    }
    if (exactAt(content, p, signal, at)) return YES;
    return caselessAt(content, p, plan.lower[i] as string, atLower);
  }

  /** Levels 1–2 by substring search over the reply and its lowercase, for signals marked SEARCH. */
  private search(content: string): void {
    const hits = this.hits;
    const { lower, lowerChanges } = this.plan;
    let lowerContent: string | undefined;
    let contentChanges = false;
    for (let i = 0; i < hits.length; i++) {
      if (hits[i] !== SEARCH) continue;
      hits[i] = NONE;
      if (content.includes(this.signals[i] as string)) {
        hits[i] = HIT;
        continue;
      }
      if (lowerContent === undefined) {
        lowerContent = content.toLowerCase();
        contentChanges = lowerContent !== content;
      }
      if ((contentChanges || lowerChanges[i] === 1) && lowerContent.includes(lower[i] as string)) hits[i] = HIT;
    }
  }
}
