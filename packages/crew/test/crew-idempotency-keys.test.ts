import { describe, expect, it } from 'vitest';
import type { Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, CrewRunError } from '@signalyard/crew';
import { POLICY, approvalCrew, calls, roundTrip } from './crew-support-approvals.js';

/** The clerk's tools, recording each call's `name@idempotencyKey` (or `name@-` without one). */
function keyedTools(): { tools: Tool[]; keys: string[] } {
  const keys: string[] = [];
  const tool = (name: string): Tool => ({
    name,
    parameters: { type: 'object' },
    execute: (_args, ctx) => {
      keys.push(`${name}@${ctx.idempotencyKey ?? '-'}`);
      return Promise.resolve(`${name} ok`);
    },
  });
  return { tools: [tool('refund'), tool('lookup'), tool('wipe')], keys };
}

describe('CrewExecutor: ToolContext.idempotencyKey', () => {
  it('numbers the run’s tool calls from 0 in the order they start, across replies', async () => {
    const { tools, keys } = keyedTools();
    const model = scriptedModel({
      clerk: [
        calls('two', ['c1', 'lookup', { order: 1 }], ['c2', 'refund', { amount: 5 }]),
        calls('one more', ['c3', 'lookup', { order: 2 }]),
        'ok [DONE]',
      ],
    });
    const executor = new CrewExecutor({ crew: approvalCrew(), model, tools });
    await executor.execute('go', { idempotencyKey: 'r-1:tool' });
    expect(keys).toEqual(['lookup@r-1:tool:0', 'refund@r-1:tool:1', 'lookup@r-1:tool:2']);
  });

  it('gives the same keys when the same run is made again (a redelivered signal)', async () => {
    const script = (): ReturnType<typeof scriptedModel> =>
      scriptedModel({ clerk: [calls('x', ['c1', 'lookup', {}], ['c2', 'lookup', {}]), 'ok [DONE]'] });
    const first = keyedTools();
    const second = keyedTools();
    await new CrewExecutor({ crew: approvalCrew(), model: script(), tools: first.tools }).execute('go', {
      idempotencyKey: 'receipt-7:tool',
    });
    await new CrewExecutor({ crew: approvalCrew(), model: script(), tools: second.tools }).execute('go', {
      idempotencyKey: 'receipt-7:tool',
    });
    expect(second.keys).toEqual(first.keys);
    expect(first.keys).toEqual(['lookup@receipt-7:tool:0', 'lookup@receipt-7:tool:1']);
  });

  it('gives tools no key when the run has none', async () => {
    const { tools, keys } = keyedTools();
    const model = scriptedModel({ clerk: [calls('x', ['c1', 'lookup', {}]), 'ok [DONE]'] });
    await new CrewExecutor({ crew: approvalCrew(), model, tools }).execute('go');
    expect(keys).toEqual(['lookup@-']);
  });

  it('stores a held call’s key in its PendingApproval; the call keeps it when a later run resumes it', async () => {
    const { tools, keys } = keyedTools();
    const model = scriptedModel({
      clerk: [
        calls('mixed', ['c1', 'lookup', {}], ['c2', 'refund', { amount: 900 }]),
        calls('after', ['c3', 'lookup', {}]),
        'ok [DONE]',
      ],
    });
    const executor = new CrewExecutor({ crew: approvalCrew(POLICY), model, tools });
    const held = await executor.execute('go', { idempotencyKey: 'asking:tool' });
    expect(held.reason).toBe('awaiting_approval');
    // The held call takes its number when it is held; the allowed one runs right after.
    expect(held.pendingApprovals).toEqual([expect.objectContaining({ id: 'ap-1', idempotencyKey: 'asking:tool:0' })]);
    expect(keys).toEqual(['lookup@asking:tool:1']);
    const done = await executor.execute('', {
      state: roundTrip(held.state),
      approvals: [{ id: 'ap-1', approved: true }],
      idempotencyKey: 'approving:tool',
    });
    expect(done.reason).toBe('terminated_by_signal');
    // The approved refund keeps the asking turn's key; the next reply's call counts in the new turn.
    expect(keys).toEqual(['lookup@asking:tool:1', 'refund@asking:tool:0', 'lookup@approving:tool:0']);
  });

  it.each([[''], [7], [null]])('fails the run with CREW_ARGUMENT_INVALID for idempotencyKey %j', async (bad) => {
    const { tools, keys } = keyedTools();
    const model = scriptedModel({ clerk: [calls('x', ['c1', 'lookup', {}]), 'ok [DONE]'] });
    const executor = new CrewExecutor({ crew: approvalCrew(), model, tools });
    const error = await executor.execute('go', { idempotencyKey: bad as string }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CrewRunError);
    expect(error).toMatchObject({ code: 'CREW_ARGUMENT_INVALID' });
    expect((error as Error).message).toContain('Invalid idempotencyKey');
    expect(keys).toEqual([]);
  });
});
