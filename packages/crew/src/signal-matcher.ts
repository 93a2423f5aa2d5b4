import { describeValue } from '@signalyard/core';
import { CrewArgumentError } from './errors/crew-argument-error.js';
import {
  assertContent,
  forEachBracketSpan,
  invalidSignalError,
  isBracketedSignal,
  normalizeBracketSpan,
} from './signal-normalize.js';

/**
 * A compiled list of signals, matched against replies with the exact semantics of
 * {@link matchLevel}: a signal matches when any of its three levels hits.
 *
 * Everything about the signals (their lowercase forms, which take part in level 3, their
 * normalised keys in a `Map`) is computed once, at construction; build one per agent and reuse
 * it for every reply. Per reply, each level makes at most one pass over the content, whatever
 * the number of signals at level 3: levels 1–2 are native `includes` searches (level 2 is
 * skipped for a signal when lowercasing changes neither it nor the reply), level 3 walks the
 * bracket spans from `indexOf('[')`, normalises each once and looks it up in the map. Linear in
 * the reply's length, no regular expression over the reply.
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
  private readonly lower: readonly string[];
  /** 1 where lowercasing changes the signal. */
  private readonly lowerChanges: Uint8Array;
  /** Normalised key → indexes (ascending) of the bracketed signals with that key. */
  private readonly byKey: ReadonlyMap<string, readonly number[]>;
  /** 1 where the signal takes part in level 3. */
  private readonly bracketed: Uint8Array;
  /** 1 where the signal is empty: it never matches. */
  private readonly empty: Uint8Array;
  // Per-call scratch state (matching is synchronous, so one set per matcher suffices).
  private readonly hits: Uint8Array;
  private limit = 0;
  private pending = 0;
  private readonly visit: (key: string) => boolean;

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
    const lower: string[] = [];
    const n = signals.length;
    this.lowerChanges = new Uint8Array(n);
    this.bracketed = new Uint8Array(n);
    this.hits = new Uint8Array(n);
    this.empty = new Uint8Array(n);
    const byKey = new Map<string, number[]>();
    for (let i = 0; i < n; i++) {
      const signal: unknown = signals[i];
      if (typeof signal !== 'string') throw invalidSignalError(signal, `at index ${i} given to SignalMatcher`);
      list.push(signal);
      if (signal === '') {
        this.empty[i] = 1;
        lower.push('');
        continue;
      }
      const l = signal.toLowerCase();
      lower.push(l);
      if (l !== signal) this.lowerChanges[i] = 1;
      if (isBracketedSignal(signal)) {
        this.bracketed[i] = 1;
        const key = normalizeBracketSpan(signal);
        const existing = byKey.get(key);
        if (existing === undefined) byKey.set(key, [i]);
        else existing.push(i);
      }
    }
    this.signals = Object.freeze(list);
    this.lower = lower;
    this.byKey = byKey;
    this.visit = (key) => {
      const indexes = this.byKey.get(key);
      if (indexes === undefined) return false;
      for (let j = 0; j < indexes.length; j++) {
        const i = indexes[j] as number;
        if (i >= this.limit) break;
        if (this.hits[i] === 0) {
          this.hits[i] = 1;
          this.pending--;
        }
      }
      return this.pending === 0;
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
    const n = this.signals.length;
    const out: number[] = [];
    if (n === 0) return out;
    this.hits.fill(0);
    this.run(content, n, n);
    for (let i = 0; i < n; i++) if (this.hits[i] === 1) out.push(i);
    return out;
  }

  /**
   * The index of the first signal (in list order) that matches `content`, or `undefined`.
   * Same result as `matchAll(content)[0]`, with less work: later signals are not searched once
   * an earlier one has matched.
   *
   * @throws CrewArgumentError `CREW_CONTENT_INVALID` when `content` is not a string.
   */
  first(content: string): number | undefined {
    assertContent(content);
    const signals = this.signals;
    const n = signals.length;
    let limit = n;
    for (let i = 0; i < n; i++) {
      if (this.empty[i] === 0 && content.includes(signals[i] as string)) {
        if (i === 0) return 0;
        limit = i;
        break;
      }
    }
    this.hits.fill(0);
    this.run(content, limit, 0);
    for (let i = 0; i < limit; i++) if (this.hits[i] === 1) return i;
    return limit === n ? undefined : limit;
  }

  /**
   * Marks in `hits` the signals with index < `limit` that match. Level 1 is searched here only
   * when `level1` covers them (matchAll); `first` has already done it.
   */
  private run(content: string, limit: number, level1: number): void {
    const hits = this.hits;
    const signals = this.signals;
    const empty = this.empty;
    let remaining = limit;
    for (let i = 0; i < limit; i++) if (empty[i] === 1) remaining--;
    for (let i = 0; i < level1; i++) {
      if (empty[i] === 0 && content.includes(signals[i] as string)) {
        hits[i] = 1;
        remaining--;
      }
    }
    if (remaining === 0) return;
    // Level 2: one lowercasing of the reply, shared by every signal.
    const lowerContent = content.toLowerCase();
    const contentChanges = lowerContent !== content;
    const lower = this.lower;
    let pending = 0;
    for (let i = 0; i < limit; i++) {
      if (hits[i] === 1 || empty[i] === 1) continue;
      if ((contentChanges || this.lowerChanges[i] === 1) && lowerContent.includes(lower[i] as string)) {
        hits[i] = 1;
      } else if (this.bracketed[i] === 1) {
        pending++;
      }
    }
    if (pending === 0) return;
    // Level 3: one walk over the bracket spans.
    this.limit = limit;
    this.pending = pending;
    forEachBracketSpan(content, this.visit);
  }
}
