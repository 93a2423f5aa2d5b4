// Anchored search for the signals a bracket-span walk cannot find (not bracketed, or longer than
// the window): levels 1–2 of many signals with one native `indexOf` pass per anchor character,
// without lowercasing the whole reply. Internal to SignalMatcher.
//
// Why it is exact. An anchor is a code unit that is ASCII but not a letter. Unicode lowercasing
// maps such a character to itself and no other character to anything containing it (only U+0130
// and U+212A lowercase to ASCII, to letters), so the anchors of `reply.toLowerCase()` are exactly
// those of `reply`, one for one. An ASCII character lowercases to one ASCII character, whatever
// its neighbours. So around an anchor of the reply, as long as the reply's characters are ASCII,
// `reply.toLowerCase()` reads as the ASCII-lowercased reply, position for position, and a
// comparison there with the lowercased signal is a comparison with `reply.toLowerCase()`. Where
// a non-ASCII character shows up the answer is "unsure", and the caller falls back to the
// literal search over `reply.toLowerCase()`. (Lowercasing is checked, over every code point, to
// keep lengths except for U+0130 and to produce ASCII only from ASCII, U+0130 and U+212A, by
// test/signal-matcher-one-pass.test.ts.)

/** The answer of {@link caselessAt}: no match at this anchor, a match, or unsure (non-ASCII). */
const NO = 0;
export const YES = 1;
export const UNSURE = 2;
export type AnchorAnswer = typeof NO | typeof YES | typeof UNSURE;

/**
 * How rare a code unit is as an anchor in replies (lower is rarer), or 0 when it cannot be an
 * anchor (letters and non-ASCII) or is too common to be worth it (whitespace and control
 * characters: a search from every space would cost more than the substring searches it saves).
 */
function anchorRank(code: number): number {
  if (code >= 0x80 || code <= 0x20 || code === 0x7f) return 0;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x7a) return 0; // a letter
  switch (code) {
    case 0x2e: // .
    case 0x2c: // ,
    case 0x2d: // -
    case 0x27: // '
      return 3;
    case 0x3a: // :
    case 0x3b: // ;
    case 0x21: // !
    case 0x3f: // ?
    case 0x2f: // /
    case 0x28: // (
    case 0x29: // )
    case 0x22: // "
      return 2;
    default:
      return code >= 0x30 && code <= 0x39 ? 2 : 1; // digits are common; brackets, symbols rare
  }
}

/**
 * The index in `signal` of its best anchor: the first of the rarest by {@link anchorRank}; -1
 * when it has none.
 */
export function anchorIndex(signal: string): number {
  let best = -1;
  let bestRank = 4;
  for (let i = 0; i < signal.length; i++) {
    const rank = anchorRank(signal.charCodeAt(i));
    if (rank !== 0 && rank < bestRank) {
      best = i;
      bestRank = rank;
    }
  }
  return best;
}

/**
 * Whether `reply.toLowerCase()` contains `lowered` (a lowercased signal) placed so that its
 * anchor at index `at` falls on the reply's anchor at `p`: {@link YES}, {@link NO}, or
 * {@link UNSURE} when a non-ASCII character of the reply is in the way. Reads from the anchor
 * forwards, then backwards, and stops at the first difference: every character it compared
 * before is ASCII, so positions in the reply and in its lowercase still correspond there.
 */
export function caselessAt(reply: string, p: number, lowered: string, at: number): AnchorAnswer {
  const n = reply.length;
  const m = lowered.length;
  for (let k = at + 1, q = p + 1; k < m; k++, q++) {
    if (q >= n) return NO;
    let c = reply.charCodeAt(q);
    if (c >= 0x80) return UNSURE;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== lowered.charCodeAt(k)) return NO;
  }
  for (let k = at - 1, q = p - 1; k >= 0; k--, q--) {
    if (q < 0) return NO;
    let c = reply.charCodeAt(q);
    if (c >= 0x80) return UNSURE;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== lowered.charCodeAt(k)) return NO;
  }
  return YES;
}

/**
 * Whether `reply` contains `signal` placed so that its anchor at index `at` falls on the reply's
 * anchor at `p`. A plain loop from the anchor outwards: `startsWith` with a position costs
 * hundreds of nanoseconds in V8, far more than the few characters compared here.
 */
export function exactAt(reply: string, p: number, signal: string, at: number): boolean {
  const start = p - at;
  const m = signal.length;
  if (start < 0 || start + m > reply.length) return false;
  for (let k = at + 1; k < m; k++) if (reply.charCodeAt(start + k) !== signal.charCodeAt(k)) return false;
  for (let k = at - 1; k >= 0; k--) if (reply.charCodeAt(start + k) !== signal.charCodeAt(k)) return false;
  return true;
}

/**
 * Whether `reply.toLowerCase()` contains the lowercase `lowered` of an ASCII signal at the place
 * that lines up with `start` in the reply. It always lines up: lowercasing keeps the length of
 * every character but U+0130 (`İ` → `i` + U+0307), and an ASCII signal cannot contain U+0307,
 * so it can end on that `i` but never cross it. Compares every character, last to first: an
 * ASCII difference anywhere is a sure {@link NO}; a non-ASCII character of the reply (whose
 * lowercase this does not compute) makes agreement elsewhere {@link UNSURE}.
 */
export function caselessInPlace(reply: string, start: number, lowered: string): AnchorAnswer {
  const m = lowered.length;
  if (start < 0 || start + m > reply.length) return NO;
  let answer: AnchorAnswer = YES;
  for (let k = m - 1; k >= 0; k--) {
    let c = reply.charCodeAt(start + k);
    if (c >= 0x80) {
      answer = UNSURE;
      continue;
    }
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== lowered.charCodeAt(k)) return NO;
  }
  return answer;
}

/** Signals sharing an anchor character, with what the scan from it needs. */
export interface AnchorGroup {
  readonly anchor: string;
  /** Signal indexes. */
  readonly members: Int32Array;
  /** Index of the anchor in each member. */
  readonly at: Int32Array;
  /** Index of the anchor in each member's lowercase (differs after a U+0130). */
  readonly atLower: Int32Array;
  /**
   * The discriminating offset from the anchor (0: none). The ASCII members are bucketed by
   * their lowercased character there: at an occurrence of the anchor, one read of the reply
   * picks the few members worth comparing.
   */
  readonly offset: number;
  /** Member positions (into `members`) by bucket: bucket `c` is `byChar[start[c]..start[c + 1])`. */
  readonly start: Int32Array;
  readonly byChar: Int32Array;
  /** Member positions of the non-ASCII members, compared at every occurrence. */
  readonly others: Int32Array;
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}

/** The offset from the anchor where the ASCII members differ most (0 when none fits them all). */
function bestOffset(lowered: readonly string[], at: readonly number[]): number {
  if (lowered.length < 2) return 0;
  let lo = -Infinity;
  let hi = Infinity;
  for (let j = 0; j < lowered.length; j++) {
    lo = Math.max(lo, -(at[j] as number));
    hi = Math.min(hi, (lowered[j] as string).length - 1 - (at[j] as number));
  }
  let best = 0;
  let bestCount = 1;
  for (let d = 1; d <= Math.max(-lo, hi); d++) {
    for (const off of [d, -d]) {
      if (off < lo || off > hi) continue;
      const seen = new Set<number>();
      for (let j = 0; j < lowered.length; j++) seen.add((lowered[j] as string).charCodeAt((at[j] as number) + off));
      if (seen.size > bestCount) {
        best = off;
        bestCount = seen.size;
      }
    }
  }
  return best;
}

/** Builds the scan data of the signals `members` (indexes into `signals`) sharing `anchor`. */
export function anchorGroup(
  anchor: string,
  members: readonly number[],
  signals: readonly string[],
  lower: readonly string[],
): AnchorGroup {
  const at = members.map((i) => (signals[i] as string).indexOf(anchor));
  const atLower = members.map((i) => (lower[i] as string).indexOf(anchor));
  const ascii: number[] = [];
  const others: number[] = [];
  members.forEach((i, m) => (isAscii(signals[i] as string) ? ascii : others).push(m));
  const offset = bestOffset(
    ascii.map((m) => lower[members[m] as number] as string),
    ascii.map((m) => at[m] as number),
  );
  const bucketOf = (m: number): number =>
    offset === 0 ? 0 : (lower[members[m] as number] as string).charCodeAt((at[m] as number) + offset);
  // Counting sort of the ASCII members by bucket (stable: members stay in list order).
  const counts = new Array<number>(129).fill(0);
  for (const m of ascii) counts[bucketOf(m) + 1] = (counts[bucketOf(m) + 1] as number) + 1;
  for (let c = 0; c < 128; c++) counts[c + 1] = (counts[c + 1] as number) + (counts[c] as number);
  const start = Int32Array.from(counts);
  const byChar = new Int32Array(ascii.length);
  for (const m of ascii) {
    const b = bucketOf(m);
    byChar[counts[b] as number] = m;
    counts[b] = (counts[b] as number) + 1;
  }
  return {
    anchor,
    members: Int32Array.from(members),
    at: Int32Array.from(at),
    atLower: Int32Array.from(atLower),
    offset,
    start,
    byChar,
    others: Int32Array.from(others),
  };
}
