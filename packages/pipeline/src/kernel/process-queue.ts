/** A position in the queue: by `rank` (smaller first), then `seq` (FIFO). @internal */
interface QueueOrder {
  readonly rank: number;
  readonly seq: number;
}

/** What a {@link ProcessQueue} holds: anything with a {@link QueueOrder}. @internal */
export interface Queued {
  readonly order: QueueOrder;
}

/**
 * A binary min-heap of processes by (priority rank, sequence number): the most urgent first,
 * FIFO within a rank. An item is in it at most once and can be removed from anywhere, so
 * `peek` reads the true front without changing anything. An item's `order` must not change while
 * it is queued.
 * @internal
 */
export class ProcessQueue<T extends Queued> {
  readonly #heap: T[] = [];
  readonly #index = new Map<T, number>();

  get size(): number {
    return this.#heap.length;
  }

  has(item: T): boolean {
    return this.#index.has(item);
  }

  /** The most urgent item, left in place; `undefined` when empty. */
  peek(): T | undefined {
    return this.#heap[0];
  }

  push(item: T): void {
    if (this.#index.has(item)) return;
    this.#heap.push(item);
    this.#index.set(item, this.#heap.length - 1);
    this.#up(this.#heap.length - 1);
  }

  /** Removes `item` when queued; returns whether it was. */
  remove(item: T): boolean {
    const i = this.#index.get(item);
    if (i === undefined) return false;
    this.#index.delete(item);
    const heap = this.#heap;
    const last = heap.pop() as T;
    if (i < heap.length) {
      heap[i] = last;
      this.#index.set(last, i);
      this.#down(this.#up(i));
    }
    return true;
  }

  /** The most urgent item, removed; `undefined` when empty. */
  pop(): T | undefined {
    const top = this.#heap[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  #up(start: number): number {
    const heap = this.#heap;
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as T, heap[parent] as T)) break;
      this.#swap(i, parent);
      i = parent;
    }
    return i;
  }

  #down(start: number): void {
    const heap = this.#heap;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l] as T, heap[m] as T)) m = l;
      if (r < heap.length && before(heap[r] as T, heap[m] as T)) m = r;
      if (m === i) return;
      this.#swap(i, m);
      i = m;
    }
  }

  #swap(i: number, j: number): void {
    const heap = this.#heap;
    const a = heap[i] as T;
    const b = heap[j] as T;
    heap[i] = b;
    heap[j] = a;
    this.#index.set(b, i);
    this.#index.set(a, j);
  }
}

/** `a` runs before `b`: more urgent, or as urgent and queued earlier. @internal */
export function before(a: Queued, b: Queued): boolean {
  const x = a.order;
  const y = b.order;
  return x.rank < y.rank || (x.rank === y.rank && x.seq < y.seq);
}
