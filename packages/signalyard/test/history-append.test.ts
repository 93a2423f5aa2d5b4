import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '@signalyard/core';
import { appendHistory, trimHistory } from '../src/history.js';

const message: fc.Arbitrary<ChatMessage> = fc.record({
  role: fc.constantFrom('user', 'assistant', 'tool', 'system'),
  content: fc.string({ maxLength: 3 }),
});

describe('appendHistory', () => {
  it('keeps exactly what trimHistory keeps of the history with the messages appended', () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 12 }),
        fc.oneof(message, fc.array(message, { maxLength: 6 })),
        fc.integer({ min: 1, max: 10 }),
        (history, added, max) => {
          const all = [...history, ...(Array.isArray(added) ? added : [added])];
          const kept = appendHistory(history, added, max);
          expect(kept).toStrictEqual([...trimHistory(all, max)]);
          kept.forEach((m, i) => expect(m).toBe(trimHistory(all, max)[i])); // the same messages, not copies
        },
      ),
    );
  });
});
