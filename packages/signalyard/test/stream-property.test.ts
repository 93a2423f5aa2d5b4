// The contract's property test (streaming.md), end to end: a three-agent crew streamed by the
// Runner, with random replies holding markers of any agent at any of the three match levels,
// bracketed text that is no marker, whitespace around them, and random chunk boundaries (so
// markers arrive split across deltas at any point). The concatenated deltas of each agent turn
// equal its visible text as the contract defines it (computed here independently, from how the
// reply was built), the last agent's equal `visibleContent`, and no prefix of the turn's delta
// stream ever contains a configured marker at any level.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ChatModel, ChatRequest, ChatStreamPart, TurnEvent } from '@signalyard/core';
import { SignalMatcher, parseCrewConfig, type CrewResponse } from '@signalyard/crew';
import { collect } from '@signalyard/test-utils';
import { createRunner, crewEngine } from 'signalyard';

const crew = parseCrewConfig(
  `
entry_point: a
agents:
  - id: a
  - id: b
  - id: c
routing:
  signals:
    a:
      - { signal: "[TO_B]", target: b }
    b:
      - { signal: "[TO_C]", target: c }
    c:
      - { signal: "[END]", target: "" }
      - { signal: "[KẾT THÚC]", target: "" }
`,
  { file: 'crew.yaml' },
);
const MARKERS = ['[TO_B]', '[TO_C]', '[END]', '[KẾT THÚC]'] as const;
const matcher = new SignalMatcher(MARKERS);

/** A marker as a model may write it: exact, case-insensitive, or normalised (spaces inside, NFD). */
const spellings: Record<(typeof MARKERS)[number], readonly string[]> = {
  '[TO_B]': ['[TO_B]', '[to_b]', '[To_B]', '[ TO_B ]', '[  to_b\t]'],
  '[TO_C]': ['[TO_C]', '[to_C]', '[ TO_C  ]', '[\nto_c ]'],
  '[END]': ['[END]', '[end]', '[ End ]', '[   END]'],
  '[KẾT THÚC]': ['[KẾT THÚC]', '[KẾT THÚC]'.normalize('NFD'), '[ kết  thúc ]', '[kết\tthúc]'],
};

/** A piece of a reply; `marker` pieces are the spans the contract hides. */
interface Piece {
  readonly text: string;
  readonly marker: boolean;
}
const markerOf = (signal: (typeof MARKERS)[number]) =>
  fc.constantFrom(...spellings[signal]).map((text): Piece => ({ text, marker: true }));
const anyMarker = fc.oneof(...MARKERS.map(markerOf));
const plain = (text: string): Piece => ({ text, marker: false });
const piece: fc.Arbitrary<Piece> = fc.oneof(
  { arbitrary: anyMarker, weight: 2 }, // markers of any agent: models echo each other's
  { arbitrary: fc.constantFrom(' ', '\n', '  ', '\t', ' \n ').map(plain), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }).map((s) => plain(s.replace(/[[\]]/g, ''))), weight: 3 },
  // Bracketed text that is no marker: it stays visible.
  { arbitrary: fc.constantFrom('[TO_BE]', '[ TO B ]', '[END_X]', '[note]', '[]').map(plain), weight: 1 },
);
/** A reply: random pieces with one of the agent's own markers somewhere, so the run goes a → b → c → end. */
const replyWith = (own: fc.Arbitrary<Piece>) =>
  fc
    .tuple(fc.array(piece, { maxLength: 10 }), own, fc.nat())
    .map(([pieces, mine, at]) => [
      ...pieces.slice(0, at % (pieces.length + 1)),
      mine,
      ...pieces.slice(at % (pieces.length + 1)),
    ]);
/** Random chunk lengths, used in turn (cycled) to cut a reply into deltas. */
const chunking = fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 8 });

/** The visible text as the contract defines it: each marker span removed with the whitespace run before it, then trimmed. */
function visibleOf(pieces: readonly Piece[]): string {
  let out = '';
  for (const p of pieces) out = p.marker ? out.replace(/\s+$/, '') : out + p.text;
  return out.trim();
}

/** A model streaming each agent's reply cut at the given chunk lengths. */
function chunkedModel(replies: Record<string, { text: string; cuts: readonly number[] }>): ChatModel {
  return {
    generate: () => Promise.reject(new Error('a streamed turn does not generate')),
    async *stream(request: ChatRequest): AsyncIterable<ChatStreamPart> {
      const { text, cuts } = replies[request.agentId ?? ''] ?? { text: '', cuts: [1] };
      for (let at = 0, i = 0; at < text.length; i++) {
        const size = cuts[i % cuts.length] ?? 1;
        yield { type: 'text-delta', delta: text.slice(at, at + size) };
        at += size;
      }
      yield { type: 'finish', response: { content: text } };
    },
  };
}

describe('streaming through the Runner: properties', () => {
  it('deltas concatenate to each agent’s visible text and to visibleContent; no prefix ever shows a marker', async () => {
    await fc.assert(
      fc.asyncProperty(
        replyWith(markerOf('[TO_B]')),
        replyWith(markerOf('[TO_C]')),
        replyWith(fc.oneof(markerOf('[END]'), markerOf('[KẾT THÚC]'))),
        fc.tuple(chunking, chunking, chunking),
        async (a, b, c, [ca, cb, cc]) => {
          const pieces = { a, b, c };
          const raw = (p: readonly Piece[]) => p.map((x) => x.text).join('');
          const model = chunkedModel({
            a: { text: raw(a), cuts: ca },
            b: { text: raw(b), cuts: cb },
            c: { text: raw(c), cuts: cc },
          });
          const runner = createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model }) }] });
          const turn = runner.stream({ channel: 'cli', text: 'go' });
          const events: TurnEvent[] = await collect(turn);
          const outcome = await turn.outcome;
          expect(outcome.status).toBe('completed');

          let shown = '';
          const byAgent: Record<string, string> = { a: '', b: '', c: '' };
          for (const e of events) {
            if (e.type !== 'text_delta') continue;
            shown += e.delta;
            expect(matcher.first(shown)).toBeUndefined();
            const speaker = e.source?.crewAgentId ?? '?';
            byAgent[speaker] = (byAgent[speaker] ?? '') + e.delta;
          }
          expect(byAgent).toEqual({ a: visibleOf(a), b: visibleOf(b), c: visibleOf(c) });
          const response = outcome.output as CrewResponse;
          expect(byAgent.c).toBe(response.visibleContent);
          // History keeps the raw replies, markers and all.
          const history = (await runner.session(outcome.sessionKey))?.history ?? [];
          expect(history.map((m) => m.content)).toEqual(['go', raw(pieces.a), raw(pieces.b), raw(pieces.c)]);
          await runner.close();
        },
      ),
      { numRuns: 100 },
    );
  }, 60_000);
});
