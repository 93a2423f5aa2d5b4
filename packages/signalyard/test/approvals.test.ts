// Tool approvals through the Runner: a turn that pauses with pending approvals, approve() through
// the three tiers, the runner defaults (no_pending_approval, awaiting_approval), stale approvals
// after rewind and fork, and the audit log — driven by a scripted engine that asks before its
// one tool runs (test-utils' approvalEngine).
import { describe, expect, it } from 'vitest';
import {
  Action,
  CheckpointConflictError,
  MemoryCheckpointStore,
  SignalKind,
  auditLogPlugin,
  createRunner,
  signal,
  type AgentDefinition,
  type AuditEntry,
  type EngineFn,
  type RunnerOptions,
  type TurnEvent,
} from 'signalyard';
import { approvalEngine, collect, rejectsCode } from '@signalyard/test-utils';
import { MAIN, recordEvents, stored, userTexts } from './support.js';

/** A runner whose agent `main` asks before refunding; `refunds` lists every refund that ran. */
function approvalRunner(extra: Partial<RunnerOptions> & { routes?: AgentDefinition['routes'] } = {}) {
  const refunds: string[] = [];
  const store = extra.store ?? new MemoryCheckpointStore();
  const engine = approvalEngine({
    tool: (args) => {
      refunds.push(args.request);
      return `refunded ${args.request}`;
    },
  }) as EngineFn;
  const { routes, ...options } = extra;
  const runner = createRunner({
    ...options,
    store,
    agents: [{ id: 'main', engine, ...(routes !== undefined && { routes }) }],
  });
  return { runner, refunds, store };
}

const ask = { channel: 'cli', text: '$150' } as const;

describe('a turn that asks for approval', () => {
  it('pauses: outcome paused with pendingApprovals, saved as the top-level checkpoint field, shown by session() and history()', async () => {
    const { runner, store } = approvalRunner();
    const outcome = await runner.handle(ask);
    expect(outcome.status).toBe('paused');
    expect(outcome.pendingApprovals).toEqual([expect.objectContaining({ id: 'ap-1', toolName: 'refund' })]);
    const { data } = await stored(store, MAIN);
    expect(data.pendingApprovals).toEqual(outcome.pendingApprovals);
    expect((await runner.session(MAIN))?.pendingApprovals).toEqual(outcome.pendingApprovals);
    const [version] = await collect(runner.history(MAIN));
    expect(version).toMatchObject({ version: 1, pendingApprovals: 1, cause: { status: 'paused' } });
    await runner.close();
  });

  it('announces the request as an approval_requested engine_event when the engine does not', async () => {
    const { runner } = approvalRunner();
    const events = recordEvents(runner);
    await runner.handle(ask);
    const requested = events.filter((e) => e.type === 'engine_event' && e.event.type === 'approval_requested');
    expect(requested).toEqual([
      expect.objectContaining({
        event: { type: 'approval_requested', agentId: 'clerk', approvals: [expect.objectContaining({ id: 'ap-1' })] },
      }),
    ]);
    await runner.close();
  });

  it('does not announce twice what the engine announced itself', async () => {
    const pending = { id: 'x1', toolCallId: 'c1', toolName: 't', arguments: {}, agentId: 'a', requestedAt: 'now' };
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            ctx.emit({ type: 'approval_requested', agentId: 'a', approvals: [pending] });
            return { pendingApprovals: [pending] };
          },
        },
      ],
    });
    const events = recordEvents(runner);
    await runner.handle(ask);
    expect(events.filter((e) => e.type === 'engine_event' && e.event.type === 'approval_requested')).toHaveLength(1);
    await runner.close();
  });

  it('a turn that ends without pendingApprovals clears them; paused without approvals stays paused with none', async () => {
    const pending = { id: 'x1', toolCallId: 'c1', toolName: 't', arguments: {}, agentId: 'a', requestedAt: 'now' };
    let turn = 0;
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async () => (++turn === 1 ? { pendingApprovals: [pending] } : { status: 'paused' as const }),
          routes: [{ kind: SignalKind.UserMessage, action: Action.Continue }],
        },
      ],
    });
    expect((await runner.handle(ask)).status).toBe('paused');
    const second = await runner.handle(ask);
    expect(second.status).toBe('paused');
    expect(second.pendingApprovals).toBeUndefined();
    expect((await runner.session(MAIN))?.pendingApprovals).toEqual([]);
    await runner.close();
  });

  it('an engine returning malformed pendingApprovals fails with TURN_RESULT_INVALID naming the value; nothing of the turn saved', async () => {
    const bad = [
      [{ id: '' }, 'id ""'],
      [[{ id: 'a', toolCallId: 'c', toolName: 't', agentId: 'x', requestedAt: 1 }], 'requestedAt 1'],
      ['nope', 'pendingApprovals "nope"'],
    ] as const;
    for (const [value, named] of bad) {
      const runner = createRunner({
        agents: [
          { id: 'main', engine: async () => ({ pendingApprovals: (Array.isArray(value) ? value : [value]) as never }) },
        ],
      });
      const list = createRunner({
        agents: [{ id: 'main', engine: async () => ({ pendingApprovals: value as never }) }],
      });
      for (const r of typeof value === 'string' ? [list] : [runner]) {
        const outcome = await r.handle(ask);
        expect(outcome.status).toBe('failed');
        expect(outcome.error?.code).toBe('TURN_RESULT_INVALID');
        expect(outcome.error?.message).toContain(named);
        expect((await r.session(MAIN))?.pendingApprovals).toEqual([]);
      }
      await runner.close();
      await list.close();
    }
    const twice = { id: 'd', toolCallId: 'c', toolName: 't', arguments: {}, agentId: 'x', requestedAt: 'now' };
    const dup = createRunner({ agents: [{ id: 'main', engine: async () => ({ pendingApprovals: [twice, twice] }) }] });
    expect((await dup.handle(ask)).error?.message).toContain('"d" twice');
    await dup.close();
  });
});

describe('runner.approve', () => {
  it('resumes the engine with the decisions: the tool runs once, the turn completes, the approvals are gone', async () => {
    const { runner, refunds, store } = approvalRunner();
    await runner.handle(ask);
    const outcome = await runner.approve(MAIN, [{ id: 'ap-1', approved: true }], { by: 'alice' });
    expect(outcome).toMatchObject({ status: 'completed', action: Action.Continue, decidedBy: undefined });
    expect(outcome.output).toBe('refunded $150');
    expect(refunds).toEqual(['$150']);
    const view = await runner.session(MAIN);
    expect(view?.pendingApprovals).toEqual([]);
    expect(view?.history.map((m) => m.content)).toEqual([
      '$150',
      'may I refund $150?',
      'refunded $150',
      'done: refunded $150',
    ]);
    // The claim (ctx.commit) and the turn's end are two versions; both record the decision and who made it.
    const versions = await collect(runner.history(MAIN));
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    expect(versions[0]?.cause).toMatchObject({
      signal: { kind: 'tool_approval' },
      status: 'completed',
      approvals: [{ id: 'ap-1', approved: true, by: 'alice' }],
    });
    expect(versions[1]?.cause).toMatchObject({ approvals: [{ id: 'ap-1', approved: true, by: 'alice' }] });
    expect(versions[1]?.cause?.status).toBeUndefined();
    expect(versions[1]?.pendingApprovals).toBe(0);
    expect((await stored(store, MAIN)).data.pendingApprovals).toBeUndefined();
    await runner.close();
  });

  it('decides against the store, not its own copy: another runner moved the session on (no session lock)', async () => {
    const store = new MemoryCheckpointStore();
    const a = approvalRunner({ store });
    const b = approvalRunner({ store });
    await a.runner.handle(ask);
    await a.runner.approve(MAIN, [{ id: 'ap-1', approved: true }]); // a's copy: nothing pending
    const asked = await b.runner.handle({ channel: 'cli', text: '$90' }); // saved by b: ap-2 pending
    expect(asked.pendingApprovals?.map((p) => p.id)).toEqual(['ap-2']);
    const outcome = await a.runner.approve(MAIN, [{ id: 'ap-2', approved: true }], { by: 'alice' });
    expect(outcome).toMatchObject({ status: 'completed', output: 'refunded $90' });
    expect(a.refunds).toEqual(['$150', '$90']);
    expect(b.refunds).toEqual([]);
    expect((await b.runner.session(MAIN))?.pendingApprovals).toEqual([]);
    await a.runner.close();
    await b.runner.close();
  });

  it('a final save that loses to another writer after the decision was committed answers failed CHECKPOINT_CONFLICT saying the tool ran, and runs it once', async () => {
    const store = new MemoryCheckpointStore();
    const refunds: string[] = [];
    const engine = approvalEngine({
      // The refund runs (after the claim was committed); then another writer saves the session.
      tool: async (args) => {
        refunds.push(args.request);
        const { version, data } = await stored(store, MAIN);
        await store.save(MAIN, { ...data, engine: { by: 'another writer' } }, version);
        return `refunded ${args.request}`;
      },
    }) as EngineFn;
    const runner = createRunner({ store, agents: [{ id: 'main', engine }] });
    await runner.handle(ask);
    const outcome = await runner.approve(MAIN, [{ id: 'ap-1', approved: true }], { by: 'alice' });
    expect(outcome.status).toBe('failed');
    const error = outcome.error as CheckpointConflictError;
    expect(CheckpointConflictError.isInstance(error)).toBe(true);
    expect(error.code).toBe('CHECKPOINT_CONFLICT');
    expect(error.message).toContain('"ap-1" (approved)');
    expect(error.message).toContain('were committed, so the approved tool calls ran');
    expect(CheckpointConflictError.isInstance(error.cause)).toBe(true);
    expect(refunds).toEqual(['$150']);
    // The claim stays committed, the other writer's save stays: nothing pending, nothing overwritten.
    const { data } = await stored(store, MAIN);
    expect(data.engine).toEqual({ by: 'another writer' });
    expect(data.pendingApprovals).toBeUndefined();
    await runner.close();
  });

  it('a denial never runs the tool; the engine hears the reason', async () => {
    const { runner, refunds } = approvalRunner();
    await runner.handle(ask);
    const outcome = await runner.approve(MAIN, [{ id: 'ap-1', approved: false, reason: 'too much' }]);
    expect(outcome.status).toBe('completed');
    expect(outcome.output).toBe('denied: too much');
    expect(refunds).toEqual([]);
    await runner.close();
  });

  it('emits approval_resolved for the decided approval (the engine emitted none)', async () => {
    const { runner } = approvalRunner();
    await runner.handle(ask);
    const events = recordEvents(runner);
    await runner.approve(MAIN, [{ id: 'ap-1', approved: false, reason: 'no' }]);
    const resolved = events.flatMap((e) =>
      e.type === 'engine_event' && e.event.type === 'approval_resolved' ? [e.event] : [],
    );
    expect(resolved).toEqual([
      { type: 'approval_resolved', agentId: 'clerk', toolCallId: 'call-1', id: 'ap-1', approved: false, reason: 'no' },
    ]);
    await runner.close();
  });

  it('with nothing pending: rejected with reject("no_pending_approval"), nothing runs, nothing saved', async () => {
    const { runner, refunds } = approvalRunner();
    await runner.handle(ask);
    await runner.approve(MAIN, [{ id: 'ap-1', approved: true }]);
    const again = await runner.approve(MAIN, [{ id: 'ap-1', approved: true }]);
    expect(again).toMatchObject({
      status: 'rejected',
      action: Action.reject('no_pending_approval'),
      decidedBy: undefined,
    });
    expect(refunds).toHaveLength(1);
    expect((await runner.session(MAIN))?.version).toBe(3);
    const fresh = await runner.approve('agent:main:other', [{ id: 'ap-1', approved: true }]);
    expect(fresh.status).toBe('rejected');
    await runner.close();
  });

  it('a user message while approvals are pending: rejected with reject("awaiting_approval"), saved in the history, nothing runs, the approvals stay', async () => {
    const { runner, refunds } = approvalRunner();
    await runner.handle(ask);
    const outcome = await runner.handle({ channel: 'cli', text: 'hello?' });
    expect(outcome).toMatchObject({
      status: 'rejected',
      action: Action.reject('awaiting_approval'),
      decidedBy: undefined,
    });
    const view = await runner.session(MAIN);
    expect(userTexts(view?.history ?? [])).toEqual(['$150', 'hello?']);
    expect(view?.pendingApprovals.map((p) => p.id)).toEqual(['ap-1']);
    expect(refunds).toEqual([]);
    // A route may still let a user message through while approvals are pending.
    const routed = approvalRunner({ routes: [{ kind: SignalKind.UserMessage, action: Action.Continue }] });
    await routed.runner.handle(ask);
    expect((await routed.runner.handle({ channel: 'cli', text: 'hello?' })).status).toBe('paused');
    await routed.runner.close();
    await runner.close();
  });

  it('a route on tool_approval refuses an unauthorised approver: rejected, nothing runs, the approval stays pending', async () => {
    const reviewers = new Set(['alice']);
    const { runner, refunds } = approvalRunner({
      routes: [
        {
          kind: SignalKind.ToolApproval,
          name: 'reviewers-only',
          priority: 10,
          predicate: (s) => !reviewers.has((s.payload as { by?: string }).by ?? ''),
          action: Action.reject('not a reviewer'),
        },
      ],
    });
    await runner.handle(ask);
    const refused = await runner.approve(MAIN, [{ id: 'ap-1', approved: true }], { by: 'mallory' });
    expect(refused).toMatchObject({ status: 'rejected', action: Action.reject('not a reviewer') });
    expect(refused.decidedBy).toMatchObject({ tier: 'agent', route: { name: 'reviewers-only' } });
    expect(refunds).toEqual([]);
    expect((await runner.session(MAIN))?.pendingApprovals.map((p) => p.id)).toEqual(['ap-1']);
    const anonymous = await runner.approve(MAIN, [{ id: 'ap-1', approved: true }]);
    expect(anonymous.status).toBe('rejected');
    expect((await runner.approve(MAIN, [{ id: 'ap-1', approved: true }], { by: 'alice' })).status).toBe('completed');
    expect(refunds).toEqual(['$150']);
    await runner.close();
  });

  it('streamApprove streams the resumed turn: routed, the approval_resolved engine_event, the outcome last', async () => {
    const { runner } = approvalRunner();
    const first = runner.stream(ask);
    const asked: TurnEvent[] = await collect(first);
    expect(asked.map((e) => (e.type === 'engine_event' ? e.event.type : e.type))).toEqual([
      'routed',
      'approval_requested',
      'outcome',
    ]);
    const stream = runner.streamApprove(MAIN, [{ id: 'ap-1', approved: true }], { by: 'alice' });
    const events = await collect(stream);
    expect(events.map((e) => (e.type === 'engine_event' ? e.event.type : e.type))).toEqual([
      'routed',
      'approval_resolved',
      'outcome',
    ]);
    expect(await stream.outcome).toEqual((events.at(-1) as { outcome: unknown }).outcome);
    expect((await stream.outcome).status).toBe('completed');
    await runner.close();
  });

  it('rejects malformed decisions and options with RUNNER_INPUT_INVALID naming the value; nothing is queued', async () => {
    const { runner } = approvalRunner();
    await runner.handle(ask);
    const cases: [unknown, unknown, string][] = [
      [[], undefined, 'decisions []'],
      ['ap-1', undefined, 'decisions "ap-1"'],
      [[{ id: 'ap-1' }], undefined, 'decisions[0].approved undefined'],
      [[{ id: '', approved: true }], undefined, 'decisions[0].id ""'],
      [[{ id: 'a', approved: true, reason: 3 }], undefined, 'decisions[0].reason 3'],
      [
        [
          { id: 'a', approved: true },
          { id: 'a', approved: false },
        ],
        undefined,
        '"a" decided twice',
      ],
      [[{ id: 'a', approved: true }], { by: '' }, 'options.by must be a non-empty string'],
      [[{ id: 'a', approved: true }], { abortSignal: 'x' }, 'options.abortSignal'],
    ];
    for (const [decisions, opts, named] of cases) {
      const error = await rejectsCode(runner.approve(MAIN, decisions as never, opts as never), 'RUNNER_INPUT_INVALID');
      expect(error.message).toContain(named);
      const streamed = runner.streamApprove(MAIN, decisions as never, opts as never);
      await rejectsCode(stream(streamed), 'RUNNER_INPUT_INVALID');
    }
    const bad = signal(SignalKind.ToolApproval, { decisions: [{ id: 'a', approved: 'yes' }] });
    const error = await rejectsCode(runner.dispatch(MAIN, bad), 'RUNNER_INPUT_INVALID');
    expect(error.message).toContain('decisions[0].approved "yes"');
    await rejectsCode(runner.dispatch(MAIN, signal(SignalKind.ToolApproval)), 'RUNNER_INPUT_INVALID');
    const byNumber = signal(SignalKind.ToolApproval, { decisions: [{ id: 'a', approved: true }], by: 7 });
    expect((await rejectsCode(runner.dispatch(MAIN, byNumber), 'RUNNER_INPUT_INVALID')).message).toContain('by 7');
    expect((await runner.session(MAIN))?.version).toBe(1);
    await runner.close();
    await rejectsCode(runner.approve(MAIN, [{ id: 'a', approved: true }]), 'RUNNER_CLOSED');
  });
});

/** Drains a stream; resolves with its outcome (a refused call rejects). */
async function stream(s: AsyncIterable<unknown> & { outcome: Promise<unknown> }): Promise<unknown> {
  await collect(s);
  return s.outcome;
}

describe('rewind and fork never re-open an approval', () => {
  it('rewind: the approval becomes stale, the engine answers it as denied ("stale: rewound") on its next turn, the tool never runs', async () => {
    const { runner, refunds, store } = approvalRunner();
    await runner.handle(ask); // version 1: ap-1 pending
    await runner.handle({ channel: 'cli', text: 'anyone?' }); // version 2: awaiting_approval
    const view = await runner.rewind(MAIN, 1);
    expect(view.pendingApprovals).toEqual([]);
    expect((await stored(store, MAIN)).data.staleApprovals).toEqual([{ id: 'ap-1', reason: 'stale: rewound' }]);
    expect((await runner.approve(MAIN, [{ id: 'ap-1', approved: true }])).status).toBe('rejected');
    const next = await runner.handle({ channel: 'cli', text: 'and now?' });
    expect(next.status).toBe('completed');
    expect(next.output).toBe('denied: stale: rewound');
    expect(refunds).toEqual([]);
    expect((await stored(store, MAIN)).data.staleApprovals).toBeUndefined();
    await runner.close();
  });

  it('fork: the fork holds the approval as stale ("stale: forked"); the source keeps it pending', async () => {
    const { runner, refunds } = approvalRunner();
    await runner.handle(ask);
    const fork = await runner.fork(MAIN, 'agent:main:what-if');
    expect(fork.pendingApprovals).toEqual([]);
    const [first] = await collect(runner.history('agent:main:what-if'));
    expect(first?.pendingApprovals).toBe(0);
    const answer = await runner.handle({ channel: 'cli', text: 'go on' });
    expect(answer.status).toBe('rejected'); // the source session: still awaiting its approval
    const onFork = await runner.dispatch('agent:main:what-if', signal(SignalKind.UserMessage, 'go on'));
    expect(onFork.output).toBe('denied: stale: forked');
    expect((await runner.session(MAIN))?.pendingApprovals.map((p) => p.id)).toEqual(['ap-1']);
    expect((await runner.approve(MAIN, [{ id: 'ap-1', approved: true }])).status).toBe('completed');
    expect(refunds).toEqual(['$150']);
    await runner.close();
  });

  it('{ reissueApprovals: true } keeps them pending, under new ids (approval-reissue.test.ts has the details)', async () => {
    const { runner, refunds } = approvalRunner();
    await runner.handle(ask);
    const fork = await runner.fork(MAIN, 'agent:main:again', { reissueApprovals: true });
    const [reissuedId] = fork.pendingApprovals.map((p) => p.id);
    expect(reissuedId).toBeDefined();
    expect(reissuedId).not.toBe('ap-1');
    expect((await runner.approve('agent:main:again', [{ id: reissuedId!, approved: true }])).status).toBe('completed');
    await runner.handle({ channel: 'cli', text: 'x' });
    const rewound = await runner.rewind(MAIN, 1, { reissueApprovals: true });
    expect(rewound.pendingApprovals).toHaveLength(1);
    expect(rewound.pendingApprovals[0]?.id).not.toBe('ap-1');
    expect(refunds).toEqual(['$150']);
    await runner.close();
  });
});

describe('the audit log', () => {
  it('records who approved what, also when a route refused it', async () => {
    const log: AuditEntry[] = [];
    const { runner } = approvalRunner({
      plugins: [auditLogPlugin((entry) => log.push(entry))],
      routes: [
        {
          kind: SignalKind.ToolApproval,
          predicate: (s) => (s.payload as { by?: string }).by === 'mallory',
          action: Action.reject('not a reviewer'),
        },
      ],
    });
    await runner.handle(ask);
    await runner.approve(MAIN, [{ id: 'ap-1', approved: true }], { by: 'mallory' });
    await runner.approve(MAIN, [{ id: 'ap-1', approved: true, reason: 'ok' }], { by: 'alice' });
    expect(log.map((e) => [e.kind, e.status, e.approvals])).toEqual([
      ['user_message', 'paused', undefined],
      ['tool_approval', 'rejected', [{ id: 'ap-1', approved: true, by: 'mallory' }]],
      ['tool_approval', 'completed', [{ id: 'ap-1', approved: true, by: 'alice' }]],
    ]);
    const anonymous: AuditEntry[] = [];
    const other = approvalRunner({ plugins: [auditLogPlugin((e) => anonymous.push(e))] });
    await other.runner.handle(ask);
    await other.runner.approve(MAIN, [{ id: 'ap-1', approved: false }]);
    expect(anonymous.at(-1)?.approvals).toEqual([{ id: 'ap-1', approved: false }]);
    await other.runner.close();
    await runner.close();
  });
});
