import { frozenJsonValue } from './frozen-mark.js';

/** Returns the object it is given: what lets {@link HistoryLink} add its private fields to a list. */
class ReturnsItsList {
  constructor(list: object) {
    return list;
  }
}

/**
 * Where a history list came from, stamped on the list itself (private fields, invisible outside
 * this module): the list it extends (`base`) and how many of `base`'s first messages it dropped,
 * so that `list[i] === base[dropped + i]` for every `i < base.length - dropped`. Both lists are
 * frozen, so the claim holds for good. A hint only: a reader that finds no link (or a cut one)
 * compares the lists itself.
 */
class HistoryLink extends ReturnsItsList {
  #base: readonly unknown[] | undefined;
  readonly #dropped: number;

  constructor(list: readonly unknown[], base: readonly unknown[], dropped: number) {
    super(list);
    this.#base = base;
    this.#dropped = dropped;
  }

  static baseOf(list: object): readonly unknown[] | undefined {
    return #base in list ? list.#base : undefined;
  }

  static droppedOf(list: object): number {
    return #dropped in list ? list.#dropped : 0;
  }

  static cut(list: object): void {
    if (#base in list) list.#base = undefined;
  }
}

/**
 * `frozenJsonValue(list)` for a history that extends `base` (a frozen JSON list, as
 * `frozenJsonValue` marks): `list` starts with every message of `base` from `dropped` on (the
 * same objects; none when `dropped` ≥ `base.length`), then new ones. The link lets the memory store log `list` without
 * comparing it with the history it logged last, message by message. `list` is new and owned by
 * the caller, as for `frozenJsonValue`; nothing is checked. Links are kept at most two deep
 * (`base`'s own base forgets where it came from), so a chain of histories never keeps old lists alive.
 * @internal
 */
export function frozenJsonHistory<T extends readonly unknown[]>(list: T, base: readonly unknown[], dropped: number): T {
  const grand = HistoryLink.baseOf(base);
  if (grand !== undefined) HistoryLink.cut(grand);
  return frozenJsonValue(new HistoryLink(list, base, dropped) as unknown as T);
}

/**
 * How many of `last`'s first messages `list` does not share, when its links say that the rest of
 * `last` starts `list` (the same objects): `list` extends `last` or extends a list that extends it.
 * −1 when they do not say so (no link, or `last` is not among the two lists it links to).
 * @internal
 */
export function linkedSkip(list: readonly unknown[], last: readonly unknown[]): number {
  const base = HistoryLink.baseOf(list);
  if (base === undefined) return -1;
  if (base === last) return HistoryLink.droppedOf(list);
  if (HistoryLink.baseOf(base) === last) return HistoryLink.droppedOf(base) + HistoryLink.droppedOf(list);
  return -1;
}

/** Forgets where `list` came from (once it is logged, its links serve no one). @internal */
export function cutHistoryLink(list: readonly unknown[]): void {
  HistoryLink.cut(list);
}
