// The Runner checks approval decisions itself (decisions-wave3 §2, §13): decisions naming no
// pending approval are refused before anything runs; in a mix, the pending ones are applied and
// the others listed in outcome.output.unknownApprovalIds; a decision's reason and its approver
// are capped.
import { describe, expect, it } from 'vitest';
import {
  Action,
  MemoryCheckpointStore,
  SignalKind,
  createRunner,
  crewEngine,
  signal,
  type ChatResponse,
  type EngineFn,
  type Tool,
} from 'signalyard';
import { scriptedModel } from '@signalyard/core/testing';
import type { CrewConfigInput, CrewResponse } from '@signalyard/crew';
import { approvalEngine, rejectsCode } from '@signalyard/test-utils';
import { MAIN, recordEvents } from './support.js';

/** A runner whose agent `main` asks before refunding; `refunds` lists every refund that ran. */
function approvalRunner() {
  const refunds: string[] = [];
  const seen: string[][] = [];
  const inner = approvalEngine({
    tool: (args) => {
      refunds.push(args.request);
      return `refunded ${args.request}`;
    },
  }) as EngineFn;
  const engine: EngineFn = (ctx) => {
    seen.push(ctx.approvals.map((d) => d.id));
    return inner(ctx);
  };
  const store = new MemoryCheckpointStore();
  const runner = createRunner({ store, agents: [{ id: 'main', engine }] });
  return { runner, refunds, seen, store };
}

const ask = { channel: 'cli', text: '$150' } as const;

const crew: CrewConfigInput = {
  entryPoint: 'clerk',
  agents: [{ id: 'clerk', tools: ['refund'] }],
  routing: { signals: { clerk: [{ signal: '[DONE]', target: '' }] } },
  approvals: { rules: [{ tool: 'refund', decision: 'ask', reason: 'refunds need a reviewer' }] },
};
const KEY = 'agent:desk:main';
const reply = (content: string, ...calls: [string, string, unknown][]): ChatResponse => ({
  content,
  toolCalls: calls.map(([id, name, args]) => ({ id, name, arguments: args })),
});

/** A crew desk whose clerk asks to refund twice in one reply; `runs` lists the refunds that ran. */
function desk() {
  const runs: unknown[] = [];
  const refund: Tool = {
    name: 'refund',
    parameters: { type: 'object' },
    execute: async (args) => {
      runs.push(args);
      return 'refunded';
    },
  };
  const model = scriptedModel({
    clerk: [
      reply('Refunding both.', ['c1', 'refund', { amount: 10 }], ['c2', 'refund', { amount: 20 }]),
      'Done. [DONE]',
    ],
  });
  const runner = createRunner({
    agents: [{ id: 'desk', engine: crewEngine(crew, { model, tools: [refund] }) }],
  });
  return { runner, runs };
}

describe('Runner.approve checks decision ids against the pending approvals', () => {
  it('a forged id alongside a pending one: the pending decision is applied, the forged id listed in output.unknownApprovalIds', async () => {
    const { runner, runs } = desk();
    const asked = await runner.dispatch(KEY, signal(SignalKind.UserMessage, 'refund both'));
    const ids = asked.pendingApprovals!.map((p) => p.id);
    expect(ids).toHaveLength(2);
    const first = await runner.approve(KEY, [
      { id: 'forged-1', approved: true },
      { id: ids[0]!, approved: true },
    ]);
    // Today: failed with CREW_APPROVAL_UNKNOWN and the valid decision dropped.
    expect(first.error).toBeUndefined();
    expect(first.status).toBe('paused');
    expect(runs).toEqual([{ amount: 10 }]);
    expect(first.pendingApprovals?.map((p) => p.id)).toEqual([ids[1]]);
    expect((first.output as CrewResponse & { unknownApprovalIds: string[] }).unknownApprovalIds).toEqual(['forged-1']);
    expect((first.output as CrewResponse).reason).toBe('awaiting_approval');

    const second = await runner.approve(KEY, [
      { id: ids[1]!, approved: false, reason: 'one is enough' },
      { id: ids[0]!, approved: true }, // decided already: no longer pending
    ]);
    expect(second.status).toBe('completed');
    expect((second.output as { unknownApprovalIds?: string[] }).unknownApprovalIds).toEqual([ids[0]]);
    expect(runs).toEqual([{ amount: 10 }]);
    await runner.close();
  });

  it('decisions naming no pending id while another approval is pending: rejected no_pending_approval, nothing runs, nothing saved', async () => {
    const { runner, refunds, seen } = approvalRunner();
    await runner.handle(ask);
    const before = await runner.session(MAIN);
    const turns = seen.length;
    const events = recordEvents(runner);
    const outcome = await runner.approve(MAIN, [
      { id: 'ap-9', approved: true },
      { id: 'forged', approved: false },
    ]);
    expect(outcome).toMatchObject({
      status: 'rejected',
      action: Action.reject('no_pending_approval'),
      decidedBy: undefined,
    });
    expect(outcome.error).toBeUndefined();
    expect(seen).toHaveLength(turns); // the engine never ran
    expect(refunds).toEqual([]);
    const after = await runner.session(MAIN);
    expect(after?.version).toBe(before?.version);
    expect(after?.pendingApprovals.map((p) => p.id)).toEqual(['ap-1']);
    expect(events.some((e) => e.type === 'turn_start')).toBe(false);
    await runner.close();
  });

  it('a route that continues a tool_approval does not get past the check: nothing pending among the ids → rejected, the engine never runs', async () => {
    const seen: unknown[] = [];
    const pending = { id: 'x1', toolCallId: 'c1', toolName: 't', arguments: {}, agentId: 'a', requestedAt: 'now' };
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.ToolApproval, name: 'always', action: Action.Continue }],
          engine: async (ctx) => {
            seen.push(ctx.approvals);
            return ctx.signal.kind === 'user_message' ? { pendingApprovals: [pending] } : {};
          },
        },
      ],
    });
    await runner.handle(ask);
    const refused = await runner.approve(MAIN, [{ id: 'nope', approved: true }]);
    expect(refused).toMatchObject({ status: 'rejected', action: Action.reject('no_pending_approval') });
    expect(seen).toHaveLength(1);
    const mixed = await runner.approve(MAIN, [
      { id: 'nope', approved: true },
      { id: 'x1', approved: true },
    ]);
    expect(mixed.status).toBe('completed');
    expect(seen.at(-1)).toEqual([{ id: 'x1', approved: true }]);
    // The engine returned no output: the list is the output.
    expect(mixed.output).toEqual({ unknownApprovalIds: ['nope'] });
    await runner.close();
  });

  it('a non-object output keeps its value beside the list', async () => {
    const pending = { id: 'x1', toolCallId: 'c1', toolName: 't', arguments: {}, agentId: 'a', requestedAt: 'now' };
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: async (ctx) =>
            ctx.signal.kind === 'user_message' ? { pendingApprovals: [pending] } : { output: 'done' },
        },
      ],
    });
    await runner.handle(ask);
    const outcome = await runner.approve(MAIN, [
      { id: 'x1', approved: true },
      { id: 'old', approved: true },
    ]);
    expect(outcome).toMatchObject({ status: 'completed', output: { output: 'done', unknownApprovalIds: ['old'] } });
    await runner.close();
  });

  it('all decisions pending: the output is the engine’s own, with no unknownApprovalIds', async () => {
    const { runner } = approvalRunner();
    await runner.handle(ask);
    const outcome = await runner.approve(MAIN, [{ id: 'ap-1', approved: true }]);
    expect(outcome).toMatchObject({ status: 'completed', output: 'refunded $150' });
    await runner.close();
  });
});

describe('approval decisions are capped (reason 1,000 and by 200 code units)', () => {
  it('a reason of 1,001 or a by of 201 code units is RUNNER_INPUT_INVALID naming the field, its length and the limit; nothing applied', async () => {
    const { runner, refunds, seen } = approvalRunner();
    await runner.handle(ask);
    const turns = seen.length;
    const longReason = await rejectsCode(
      runner.approve(MAIN, [{ id: 'ap-1', approved: false, reason: 'x'.repeat(1001) }]),
      'RUNNER_INPUT_INVALID',
    );
    expect(longReason.message).toContain('decisions[0].reason 1001 code units long, expected at most 1000');
    const longBy = await rejectsCode(
      runner.approve(MAIN, [{ id: 'ap-1', approved: true }], { by: 'b'.repeat(201) }),
      'RUNNER_INPUT_INVALID',
    );
    expect(longBy.message).toContain('by 201 code units long, expected at most 200');
    // dispatch() of a tool_approval signal is held to the same caps.
    const viaDispatch = await rejectsCode(
      runner.dispatch(
        MAIN,
        signal(SignalKind.ToolApproval, { decisions: [{ id: 'ap-1', approved: true }], by: 'b'.repeat(201) }),
      ),
      'RUNNER_INPUT_INVALID',
    );
    expect(viaDispatch.message).toContain('by 201 code units long');
    const streamed = runner.streamApprove(MAIN, [
      { id: 'ap-1', approved: true },
      { id: 'ap-2', approved: false, reason: 'y'.repeat(5000) },
    ]);
    expect((await rejectsCode(streamed.outcome, 'RUNNER_INPUT_INVALID')).message).toContain(
      'decisions[1].reason 5000 code units long, expected at most 1000',
    );
    expect(seen).toHaveLength(turns);
    expect(refunds).toEqual([]);
    expect((await runner.session(MAIN))?.version).toBe(1);
    expect((await runner.session(MAIN))?.pendingApprovals.map((p) => p.id)).toEqual(['ap-1']);
    await runner.close();
  });

  it('exactly 1,000 and 200 code units are accepted', async () => {
    const { runner, refunds } = approvalRunner();
    await runner.handle(ask);
    const outcome = await runner.approve(MAIN, [{ id: 'ap-1', approved: false, reason: 'r'.repeat(1000) }], {
      by: 'b'.repeat(200),
    });
    expect(outcome).toMatchObject({ status: 'completed', output: `denied: ${'r'.repeat(1000)}` });
    expect(refunds).toEqual([]);
    await runner.close();
  });
});
