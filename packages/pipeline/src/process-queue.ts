/** What a {@link ProcessQueue} orders: by `rank`, then `seq`; `epoch` invalidates older entries. @internal */
export interface Queued {
  readonly rank: number;
  readonly seq: number;
  readonly epoch: number;
}

/** The item with its key and epoch as they were when it was pushed (a stale item's key may change). */
interface Entry<T extends Queued> {
  readonly item: T;
  readonly rank: number;
  readonly seq: number;
  readonly epoch: number;
}

/**
 * A binary min-heap of processes by (priority rank, sequence number): the most urgent first,
 * FIFO within a rank. Removal is lazy: an entry whose item's `epoch` has moved on since it was
 * pushed (the process changed state) is dropped when it reaches the top.
 * @internal
 */
export class ProcessQueue<T extends Queued> {
  #heap: Entry<T>[] = [];

  push(item: T): void {
    const heap = this.#heap;
    heap.push({ item, rank: item.rank, seq: item.seq, epoch: item.epoch });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as Entry<T>, heap[parent] as Entry<T>)) break;
      swap(heap, i, parent);
      i = parent;
    }
  }

  /** The most urgent live item, removed; `undefined` when none. */
  pop(): T | undefined {
    for (;;) {
      const top = this.#removeTop();
      if (top === undefined) return undefined;
      if (top.epoch === top.item.epoch) return top.item;
    }
  }

  #removeTop(): Entry<T> | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l] as Entry<T>, heap[m] as Entry<T>)) m = l;
      if (r < heap.length && before(heap[r] as Entry<T>, heap[m] as Entry<T>)) m = r;
      if (m === i) return top;
      swap(heap, i, m);
      i = m;
    }
  }
}

function before(a: Entry<Queued>, b: Entry<Queued>): boolean {
  return a.rank < b.rank || (a.rank === b.rank && a.seq < b.seq);
}

function swap(heap: unknown[], i: number, j: number): void {
  const t = heap[i];
  heap[i] = heap[j];
  heap[j] = t;
}
