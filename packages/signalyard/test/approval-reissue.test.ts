// fork / rewind with { reissueApprovals: true }: the restored pending approvals are issued again
// under new ids, so a decision on an id sent out before the fork or rewind never decides them. The
// engine's state is untouched: the runner translates ids at the engine boundary (decisions,
// pendingApprovals, approval events, the transcript) with aliases kept in the checkpoint.
import { describe, expect, it } from 'vitest';
import {
  Action,
  MemoryCheckpointStore,
  SignalKind,
  type AgentDefinition,
  createRunner,
  type CheckpointStore,
  type Engine,
  type EngineFn,
  type TranscriptEntry,
} from 'signalyard';
import { approvalEngine, collect } from '@signalyard/test-utils';
import { MAIN, recordEvents, stored } from './support.js';

const FORK = 'agent:main:again';
const ask = { channel: 'cli', text: '$150' } as const;

/** The test engine's state, as far as its transcript reads it. */
interface Held {
  readonly held?: { readonly id: string; readonly toolCallId: string; readonly arguments: unknown };
}

/** A runner whose agent `main` asks before refunding, with a transcript showing the held call's approval id. */
function reissueRunner(store: CheckpointStore = new MemoryCheckpointStore(), routes?: AgentDefinition['routes']) {
  const refunds: string[] = [];
  const seen: string[][] = [];
  const turn = approvalEngine({
    tool: (args) => {
      refunds.push(args.request);
      return `refunded ${args.request}`;
    },
  }) as EngineFn;
  const engine: Engine = {
    turn: (ctx) => {
      seen.push(ctx.approvals.map((d) => d.id));
      return turn(ctx);
    },
    transcript: (history, state): TranscriptEntry[] => {
      const held = (state as Held | undefined)?.held;
      const entries: TranscriptEntry[] = history.flatMap((m): TranscriptEntry[] =>
        m.role === 'user' ? [{ type: 'user', text: m.content }] : [],
      );
      if (held === undefined) return entries;
      return [
        ...entries,
        {
          type: 'tool',
          call: { id: held.toolCallId, name: 'refund', arguments: held.arguments },
          status: 'pending_approval',
          approvalId: held.id,
        },
      ];
    },
  };
  const runner = createRunner({ store, agents: [{ id: 'main', engine, ...(routes !== undefined && { routes }) }] });
  return { runner, refunds, store, seen };
}

function approvalIds(entries: readonly TranscriptEntry[]): (string | undefined)[] {
  return entries.flatMap((e) => (e.type === 'tool' ? [e.approvalId] : []));
}

describe('fork with { reissueApprovals: true }', () => {
  it('issues the pending approval under a new id; the new id decides it once; the old id never does', async () => {
    const { runner, refunds, seen } = reissueRunner();
    await runner.handle(ask); // MAIN: ap-1 pending
    const fork = await runner.fork(MAIN, FORK, { reissueApprovals: true });
    const [newId] = fork.pendingApprovals.map((p) => p.id);
    expect(newId).toBeDefined();
    expect(newId).not.toBe('ap-1');
    expect(fork.pendingApprovals[0]).toMatchObject({ toolName: 'refund', toolCallId: 'call-1' });
    expect((await runner.session(FORK))?.pendingApprovals.map((p) => p.id)).toEqual([newId]);
    expect((await collect(runner.history(FORK)))[0]?.pendingApprovals).toBe(1);
    expect(approvalIds(await runner.transcript(FORK))).toEqual([newId]);

    // The old id (a link sent before the fork) is unknown to the fork: refused by the runner's own
    // check (no_pending_approval), nothing runs, the approval stays.
    const old = await runner.approve(FORK, [{ id: 'ap-1', approved: true }]);
    expect(old).toMatchObject({ status: 'rejected', action: Action.reject('no_pending_approval') });
    expect((await runner.session(FORK))?.pendingApprovals.map((p) => p.id)).toEqual([newId]);
    expect(seen.at(-1)).not.toContain('ap-1');
    expect(refunds).toEqual([]);

    // The new id decides it: the engine hears its own id, the tool runs once.
    const events = recordEvents(runner);
    const approved = await runner.approve(FORK, [{ id: newId!, approved: true }], { by: 'alice' });
    expect(approved).toMatchObject({ status: 'completed', output: 'refunded $150' });
    expect(seen.at(-1)).toEqual(['ap-1']);
    expect(refunds).toEqual(['$150']);
    const resolved = events.flatMap((e) =>
      e.type === 'engine_event' && e.event.type === 'approval_resolved' ? [e.event.id] : [],
    );
    expect(resolved).toEqual([newId]);
    expect((await runner.session(FORK))?.pendingApprovals).toEqual([]);
    expect((await runner.approve(FORK, [{ id: newId!, approved: true }])).status).toBe('rejected');
    expect(refunds).toEqual(['$150']);

    // The source is independent: its own ap-1 is still pending, and decided by its own id.
    expect((await runner.session(MAIN))?.pendingApprovals.map((p) => p.id)).toEqual(['ap-1']);
    expect((await runner.approve(MAIN, [{ id: newId!, approved: true }])).status).toBe('rejected');
    expect((await runner.approve(MAIN, [{ id: 'ap-1', approved: true }])).status).toBe('completed');
    expect(refunds).toEqual(['$150', '$150']);
    await runner.close();
  });

  it('keeps the alias in the checkpoint while pending and drops it once decided', async () => {
    const { runner, store } = reissueRunner();
    await runner.handle(ask);
    const fork = await runner.fork(MAIN, FORK, { reissueApprovals: true });
    const newId = fork.pendingApprovals[0]!.id;
    const data = (await stored(store, FORK)).data as unknown as Record<string, unknown>;
    expect(data.approvalAliases).toEqual({ [newId]: 'ap-1' });
    expect((data.engine as Held).held?.id).toBe('ap-1'); // the engine's state is untouched
    await runner.approve(FORK, [{ id: newId, approved: false, reason: 'no' }]);
    expect(((await stored(store, FORK)).data as unknown as Record<string, unknown>).approvalAliases).toBeUndefined();
    await runner.close();
  });
});

describe('rewind with { reissueApprovals: true }', () => {
  it('twice: each rewind issues new ids, older ones are refused, the newest decides the engine id', async () => {
    const { runner, refunds, seen } = reissueRunner();
    await runner.handle(ask); // version 1: ap-1 pending
    await runner.handle({ channel: 'cli', text: 'anyone?' }); // version 2: awaiting_approval
    const first = await runner.rewind(MAIN, 1, { reissueApprovals: true }); // version 3
    const firstId = first.pendingApprovals[0]!.id;
    expect(firstId).not.toBe('ap-1');
    const second = await runner.rewind(MAIN, 3, { reissueApprovals: true }); // version 4, from the reissued one
    const secondId = second.pendingApprovals[0]!.id;
    expect(new Set(['ap-1', firstId, secondId]).size).toBe(3);
    expect(approvalIds(await runner.transcript(MAIN))).toEqual([secondId]);
    for (const id of ['ap-1', firstId]) {
      const refused = await runner.approve(MAIN, [{ id, approved: true }]);
      expect(refused).toMatchObject({ status: 'rejected', action: Action.reject('no_pending_approval') });
      expect((await runner.session(MAIN))?.pendingApprovals.map((p) => p.id)).toEqual([secondId]);
    }
    expect(refunds).toEqual([]);
    const done = await runner.approve(MAIN, [{ id: secondId, approved: true }]);
    expect(done).toMatchObject({ status: 'completed', output: 'refunded $150' });
    expect(seen.at(-1)).toEqual(['ap-1']);
    expect(refunds).toEqual(['$150']);
    await runner.close();
  });

  it('a turn that leaves the reissued approval pending reports it under the new id (nothing announced again)', async () => {
    const { runner, store } = reissueRunner(undefined, [{ kind: SignalKind.UserMessage, action: Action.Continue }]);
    await runner.handle(ask);
    const rewound = await runner.rewind(MAIN, 1, { reissueApprovals: true });
    const newId = rewound.pendingApprovals[0]!.id;
    const events = recordEvents(runner);
    const again = await runner.handle({ channel: 'cli', text: 'still there?' }); // the engine runs, still holding ap-1
    expect(again.status).toBe('paused');
    expect(again.pendingApprovals?.map((p) => p.id)).toEqual([newId]);
    expect((await runner.session(MAIN))?.pendingApprovals.map((p) => p.id)).toEqual([newId]);
    expect(((await stored(store, MAIN)).data as unknown as Record<string, unknown>).approvalAliases).toEqual({
      [newId]: 'ap-1',
    });
    expect(events.filter((e) => e.type === 'engine_event' && e.event.type.startsWith('approval_'))).toEqual([]);
    await runner.close();
  });

  it("an engine's own approval events reach listeners with the public ids", async () => {
    const pending = { id: 'x1', toolCallId: 'c1', toolName: 't', arguments: {}, agentId: 'a', requestedAt: 'now' };
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            const decided = ctx.approvals.find((d) => d.id === 'x1');
            if (decided !== undefined) {
              ctx.emit({ type: 'approval_resolved', id: 'x1', approved: decided.approved });
              return { output: 'done' };
            }
            ctx.emit({ type: 'approval_requested', agentId: 'a', approvals: [pending] });
            return { pendingApprovals: [pending] };
          },
          routes: [{ kind: SignalKind.UserMessage, action: Action.Continue }],
        },
      ],
    });
    await runner.handle(ask);
    const view = await runner.rewind(MAIN, 1, { reissueApprovals: true });
    const newId = view.pendingApprovals[0]!.id;
    const events = recordEvents(runner);
    await runner.handle({ channel: 'cli', text: 'again' }); // the engine asks again, under x1
    const done = await runner.approve(MAIN, [{ id: newId, approved: true }]);
    expect(done.output).toBe('done');
    const shown = events.flatMap((e) => (e.type === 'engine_event' ? [e.event] : []));
    expect(shown).toEqual([
      { type: 'approval_requested', agentId: 'a', approvals: [{ ...pending, id: newId }] },
      { type: 'approval_resolved', id: newId, approved: true },
    ]);
    await runner.close();
  });

  it('without reissue after a reissue: the stale approval is answered as denied under the engine id', async () => {
    const { runner, refunds, seen } = reissueRunner();
    await runner.handle(ask); // 1
    await runner.rewind(MAIN, 1, { reissueApprovals: true }); // 2: reissued
    await runner.rewind(MAIN, 2); // 3: retired
    expect((await runner.session(MAIN))?.pendingApprovals).toEqual([]);
    const next = await runner.handle({ channel: 'cli', text: 'and now?' });
    expect(seen.at(-1)).toEqual(['ap-1']);
    expect(next.output).toBe('denied: stale: rewound');
    expect(refunds).toEqual([]);
    await runner.close();
  });
});

describe('reissued ids across runners', () => {
  it('a new runner over the same store still maps the new id (and refuses the old one)', async () => {
    const store = new MemoryCheckpointStore();
    const a = reissueRunner(store);
    await a.runner.handle(ask);
    const fork = await a.runner.fork(MAIN, FORK, { reissueApprovals: true });
    await a.runner.close();
    const b = reissueRunner(store);
    const newId = fork.pendingApprovals[0]!.id;
    expect((await b.runner.session(FORK))?.pendingApprovals.map((p) => p.id)).toEqual([newId]);
    expect(approvalIds(await b.runner.transcript(FORK))).toEqual([newId]);
    expect((await b.runner.approve(FORK, [{ id: 'ap-1', approved: true }])).status).toBe('rejected');
    const done = await b.runner.approve(FORK, [{ id: newId, approved: true }]);
    expect(done).toMatchObject({ status: 'completed', output: 'refunded $150' });
    expect(b.refunds).toEqual(['$150']);
    await b.runner.close();
  });
});
