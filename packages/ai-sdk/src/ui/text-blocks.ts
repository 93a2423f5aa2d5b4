import type { UIMessageChunk } from 'ai';

/** Who is speaking: one text block per speaker at a time. @internal */
export interface Speaker {
  /** Identifies the speaker within the turn: `crew:<agent>`, `stage:<stage>` or `agent:<runner agent>`. */
  readonly key: string;
  /** The crew path from the run's entry agent to the speaker, when the engine reports it. */
  readonly path?: readonly string[];
}

interface OpenBlock {
  readonly id: string;
  readonly speaker: Speaker;
}

/**
 * The open `text-start` … `text-end` blocks of one UI message stream.
 *
 * A block opens at a speaker's first delta and gets its own id; a new speaker closes every open
 * block it does not run alongside (the caller decides which speakers run concurrently, e.g. the
 * members of a parallel group), so a handoff starts a new text part while concurrent speakers'
 * deltas interleave, each in its own block.
 * @internal
 */
export class TextBlocks {
  readonly #open = new Map<string, OpenBlock>();
  #count = 0;

  /**
   * The chunks for `delta` spoken by `speaker`: closes the open blocks of speakers not
   * `concurrent` with it and opens its block when it has none, then the `text-delta`.
   */
  write(speaker: Speaker, delta: string, concurrent: (a: Speaker, b: Speaker) => boolean): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    let block = this.#open.get(speaker.key);
    if (block === undefined) {
      for (const other of [...this.#open.values()]) {
        if (!concurrent(other.speaker, speaker)) this.#end(other, chunks);
      }
      block = { id: `text-${this.#count++}`, speaker };
      this.#open.set(speaker.key, block);
      chunks.push({ type: 'text-start', id: block.id });
    }
    chunks.push({ type: 'text-delta', id: block.id, delta });
    return chunks;
  }

  /** Closes the block of the speaker `key`, if one is open. */
  close(key: string): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    const block = this.#open.get(key);
    if (block !== undefined) this.#end(block, chunks);
    return chunks;
  }

  /** Closes every open block, in the order they were opened. */
  closeAll(): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    for (const block of [...this.#open.values()]) this.#end(block, chunks);
    return chunks;
  }

  #end(block: OpenBlock, chunks: UIMessageChunk[]): void {
    this.#open.delete(block.speaker.key);
    chunks.push({ type: 'text-end', id: block.id });
  }
}
