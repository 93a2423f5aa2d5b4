// Runner.transcript is chronological (decisions-wave3.md §3–§4): what a page reload renders is
// what the live stream showed, in the same order — the held reply where it was produced (with the
// handoff that led to it), messages sent during the wait after it, every handoff kept, and a
// parallel group's members each with its visible reply.
import { type ChatRequest, type ChatResponse, type TranscriptEntry, type TurnEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { createRunner, crewEngine, type Runner } from 'signalyard';
import { describe, expect, it } from 'vitest';
import { chronologicalHistory, waitsAfter } from '../src/crew-waits.js';

const crew = parseCrewConfig(
  `
entry_point: front
agents:
  - id: front
  - id: clerk
    tools: [refund]
  - id: law
  - id: tax
routing:
  signals:
    front:
      - { signal: "[CLERK]", target: clerk }
      - { signal: "[EXPERTS]", target: experts }
    clerk:
      - { signal: "[DONE]", target: "" }
  parallel_groups:
    experts: { agents: [law, tax], next_agent: clerk }
approvals:
  rules:
    - { tool: refund, when: [{ path: amount, gt: 100 }], decision: ask, reason: large refund }
`,
  { file: 'crew.yaml' },
);

const dm = (text: string) => ({ channel: 'web', peer: { kind: 'dm' as const, id: 'u1' }, text });

function deskRunner(): { runner: Runner; refunds: number[] } {
  const refunds: number[] = [];
  const lastUser = (req: ChatRequest) => req.messages.findLast((m) => m.role === 'user')?.content ?? '';
  const model = scriptedModel(
    (req): ChatResponse | string => {
      const last = req.messages.at(-1);
      switch (req.agentId) {
        case 'front':
          return lastUser(req).includes('experts') ? 'Asking the experts. [EXPERTS]' : 'Over to the clerk. [CLERK]';
        case 'law':
          return 'Legal: fine [CLERK]';
        case 'tax':
          return 'Tax: deductible';
        default:
          if (last?.role === 'tool') return `Refund result: ${last.content} [DONE]`;
          if (lastUser(req).startsWith('law: ')) return 'The experts answered. [DONE]';
          if (lastUser(req).includes('two'))
            return {
              content: 'Refunding twice.',
              toolCalls: [
                { id: 'ra', name: 'refund', arguments: { amount: 500 } },
                { id: 'rb', name: 'refund', arguments: { amount: 700 } },
              ],
            };
          return {
            content: 'Refunding $500.',
            toolCalls: [{ id: `r${req.messages.length}`, name: 'refund', arguments: { amount: 500 } }],
          };
      }
    },
    { streamChunkChars: 4 },
  );
  const runner = createRunner({
    agents: [
      {
        id: 'desk',
        engine: crewEngine(crew, {
          model,
          tools: [
            {
              name: 'refund',
              parameters: { type: 'object' },
              execute: (args) => {
                refunds.push((args as { amount: number }).amount);
                return Promise.resolve('refunded');
              },
            },
          ],
        }),
      },
    ],
    routing: { defaultAgentId: 'desk' },
  });
  return { runner, refunds };
}

/** What the live stream showed of a turn, as transcript-like entries: handoffs, each speaker's text, tool calls. */
async function live(events: AsyncIterable<TurnEvent>): Promise<unknown[]> {
  const shown: unknown[] = [];
  // Each speaker's reply in progress (members of a parallel group speak at once).
  const open = new Map<string, { agentId: string; text: string }>();
  for await (const e of events) {
    if (e.type === 'text_delta') {
      const agentId = e.source?.crewAgentId ?? '';
      let text = open.get(agentId);
      if (text === undefined) {
        text = { agentId, text: '' };
        open.set(agentId, text);
        shown.push(text);
      }
      text.text += e.delta;
    } else if (e.type === 'engine_event') {
      const ev = e.event as {
        type: string;
        agentId?: string;
        from?: string;
        to?: string;
        group?: string;
        approvals?: { id: string }[];
      };
      if (ev.type === 'handoff') {
        open.clear();
        shown.push({ handoff: `${ev.from} → ${ev.to}`, ...(ev.group !== undefined && { group: ev.group }) });
      } else if (ev.type === 'agent_response') {
        open.delete(ev.agentId ?? '');
      } else if (ev.type === 'approval_requested') {
        for (const a of ev.approvals ?? []) shown.push({ pending: a.id });
      }
    }
  }
  return shown;
}

/** The same view of a transcript's entries after `from` (what a reload shows of those turns). */
function reloaded(entries: readonly TranscriptEntry[]): unknown[] {
  return entries.flatMap((e): unknown[] => {
    switch (e.type) {
      case 'handoff':
        return [{ handoff: `${e.from} → ${e.to}`, ...(e.group !== undefined && { group: e.group }) }];
      case 'assistant':
        return [{ agentId: e.agentId, text: e.text }];
      case 'tool':
        return e.status === 'pending_approval' ? [{ pending: e.approvalId }] : [];
      default:
        return [];
    }
  });
}

describe('Runner.transcript is chronological', () => {
  it('a reload mid-approval shows the handoff and the held reply where they happened, a message sent during the wait after them', async () => {
    const { runner, refunds } = deskRunner();
    const turn = runner.stream(dm('refund me'));
    const shown = await live(turn);
    const { status, sessionKey: KEY } = await turn.outcome;
    expect(status).toBe('paused');
    const held = await runner.transcript(KEY);
    // The same entries, in the same order, as the live stream showed.
    expect(reloaded(held)).toEqual(shown);
    expect(held.map((e) => e.type)).toEqual(['user', 'assistant', 'handoff', 'assistant', 'tool']);

    // A message during the wait is saved (nothing runs) and comes after the held reply.
    const waiting = await runner.handle(dm('hello?'));
    expect(waiting.status).toBe('rejected');
    const during = await runner.transcript(KEY);
    expect(during).toEqual([...held, expect.objectContaining({ type: 'user', text: 'hello?' })]);

    // Approved: the reply where it was held, its call done, then the wait's message, then what followed.
    const pendingId = held.at(-1)?.type === 'tool' ? (held.at(-1) as { approvalId: string }).approvalId : '';
    expect((await runner.approve(KEY, [{ id: pendingId, approved: true }])).status).toBe('completed');
    expect(refunds).toEqual([500]);
    const after = await runner.transcript(KEY);
    expect(after.map((e) => (e.type === 'tool' ? `tool:${e.status}` : e.type))).toEqual([
      'user',
      'assistant',
      'handoff',
      'assistant',
      'tool:done',
      'user',
      'assistant',
    ]);
    expect(after.slice(0, 4)).toEqual(held.slice(0, 4));
    await runner.close();
  });

  it("a parallel group survives a reload: each member's handoff and visible reply, as live", async () => {
    const { runner } = deskRunner();
    const turn = runner.stream(dm('ask the experts'));
    const shown = await live(turn);
    const { status, sessionKey: KEY } = await turn.outcome;
    expect(status).toBe('completed');
    const entries = await runner.transcript(KEY);
    expect(reloaded(entries)).toEqual(shown);
    expect(entries.filter((e) => e.type === 'assistant' && e.group !== undefined)).toEqual([
      { type: 'assistant', agentId: 'law', text: 'Legal: fine', group: 'experts' },
      { type: 'assistant', agentId: 'tax', text: 'Tax: deductible', group: 'experts' },
    ]);
    expect(shown).toContainEqual({ handoff: 'front → law', group: 'experts' });
    await runner.close();
  });

  it('a held reply decided in two steps stays where it was produced while still held', async () => {
    const { runner, refunds } = deskRunner();
    const first = await runner.handle(dm('refund two charges'));
    expect(first.pendingApprovals?.map((p) => p.id)).toEqual(['ap-1', 'ap-2']);
    const held = await runner.transcript(first.sessionKey);
    await runner.handle(dm('hello?'));
    // One of the two decided: the other keeps the batch held, still where it was produced.
    expect((await runner.approve(first.sessionKey, [{ id: 'ap-1', approved: true }])).status).toBe('paused');
    expect(refunds).toEqual([500]);
    const after = await runner.transcript(first.sessionKey);
    expect(after.map((e) => (e.type === 'tool' ? `tool:${e.status}` : e.type))).toEqual([
      'user',
      'assistant',
      'handoff',
      'assistant',
      'tool:done',
      'tool:pending_approval',
      'user',
    ]);
    expect(after.slice(0, 4)).toEqual(held.slice(0, 4));
    // Then the second: the block lands where it was held, the wait's message after it.
    expect((await runner.approve(first.sessionKey, [{ id: 'ap-2', approved: false }])).status).toBe('completed');
    const done = await runner.transcript(first.sessionKey);
    expect(done.map((e) => (e.type === 'tool' ? `tool:${e.status}` : e.type))).toEqual([
      'user',
      'assistant',
      'handoff',
      'assistant',
      'tool:done',
      'tool:denied',
      'user',
      'assistant',
    ]);
    await runner.close();
  });
});

describe("chronologicalHistory (the crew engine's waits)", () => {
  const u = (content: string) => ({ role: 'user' as const, content });
  const block = [
    { role: 'assistant' as const, content: 'held', toolCalls: [{ id: 'c1', name: 'refund', arguments: {} }] },
    { role: 'tool' as const, content: 'ok', toolCallId: 'c1' },
  ];
  it('moves a resumed block back before the messages of its wait', () => {
    const history = [u('a'), u('w1'), u('w2'), ...block, u('b')];
    expect(chronologicalHistory(history, [{ call: 'c1', messages: 2 }])).toEqual([
      u('a'),
      ...block,
      u('w1'),
      u('w2'),
      u('b'),
    ]);
  });
  it('changes nothing for no waits, malformed waits, or a block trimmed away', () => {
    const history = [u('w1'), ...block];
    expect(chronologicalHistory(history, undefined)).toBe(history);
    expect(chronologicalHistory(history, [{ call: 'c1', messages: 0 }])).toBe(history);
    expect(chronologicalHistory(history, 'nope')).toBe(history);
    expect(chronologicalHistory(history, [{ call: 'c1', messages: 5 }])).toEqual(history);
    expect(chronologicalHistory(history, [{ call: 'gone', messages: 1 }])).toEqual(history);
  });
  it('records a wait only when the held batch was appended after messages arrived, keeping the newest 64', () => {
    const before = {
      issued: 1,
      decided: [],
      batch: {
        ...block[0]!,
        message: block[0]!,
        agentId: 'a',
        calls: [],
        at: 1,
        run: { modelCalls: 1, handoffs: 0, toolRounds: 0, path: ['a'] },
      },
    } as never;
    const done = { issued: 1, decided: ['ap-1'] };
    expect(waitsAfter(undefined, before, done, 2)).toEqual([{ call: 'c1', messages: 2 }]);
    expect(waitsAfter(undefined, before, done, 0)).toBeUndefined();
    expect(waitsAfter(undefined, before, before, 2)).toBeUndefined();
    expect(waitsAfter(undefined, undefined, done, 2)).toBeUndefined();
    const many = Array.from({ length: 64 }, (_, i) => ({ call: `x${i}`, messages: 1 }));
    const kept = waitsAfter(many, before, done, 3)!;
    expect(kept).toHaveLength(64);
    expect(kept.at(-1)).toEqual({ call: 'c1', messages: 3 });
    expect(kept[0]).toEqual({ call: 'x1', messages: 1 });
  });
});
