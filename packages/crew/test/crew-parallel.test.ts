import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { AbortedError, defineTool, type ChatModel, type SignalyardError } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import {
  CrewExecutor,
  CrewRunError,
  type CrewConfigInput,
  type CrewEvent,
  type ParallelGroupInput,
} from '@signalyard/crew';
import { collect, deafModel, endOf, hangingModel, runError, trace } from './crew-support.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** lead → group "g" (members fast, slow) → lead; lead ends on [END]. */
function groupCrew(
  group: Partial<ParallelGroupInput> = {},
  settings: CrewConfigInput['settings'] = {},
): CrewConfigInput {
  return {
    entryPoint: 'lead',
    agents: [{ id: 'lead' }, { id: 'fast' }, { id: 'slow' }],
    settings: { parallelTimeoutSeconds: 60, ...settings },
    routing: {
      signals: {
        lead: [
          { signal: '[ASK]', target: 'g' },
          { signal: '[END]', target: '' },
        ],
      },
      parallelGroups: { g: { agents: ['slow', 'fast'], nextAgent: 'lead', ...group } },
    },
  };
}

const memberEnds = (events: readonly CrewEvent[]) =>
  events.flatMap((e) =>
    e.type === 'parallel_member_end' ? [{ agentId: e.agentId, status: e.status, code: e.error?.code }] : [],
  );

/** Streams a run while advancing fake time by `ms` once it is underway. */
async function collectAdvancing(executor: CrewExecutor, ms: number): Promise<CrewEvent[]> {
  const events = collect(executor, 'go');
  await vi.advanceTimersByTimeAsync(ms);
  return events;
}

describe('CrewExecutor: parallel groups', () => {
  it('regression: a slow member past the group timeout is aborted (its abortSignal fires) and the group succeeds (the Go framework ignored timeout_seconds)', async () => {
    const slow = hangingModel();
    const model = { lead: scriptedModel(['[ASK]', 'thanks [END]']), fast: scriptedModel(['quick answer']), slow };
    const executor = new CrewExecutor({ crew: groupCrew({ timeoutSeconds: 30 }), model });
    const events = collect(executor, 'go');
    await vi.advanceTimersByTimeAsync(29_999);
    expect(slow.requests[0]!.abortSignal!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const all = await events;
    expect(slow.requests[0]!.abortSignal!.aborted).toBe(true);
    expect(memberEnds(all)).toEqual([
      { agentId: 'fast', status: 'succeeded', code: undefined },
      { agentId: 'slow', status: 'timed_out', code: 'CREW_PARALLEL_TIMEOUT' },
    ]);
    expect(all.find((e) => e.type === 'parallel_end')).toEqual({
      type: 'parallel_end',
      group: 'g',
      succeeded: ['fast'],
    });
    const response = endOf(all);
    expect(response).toMatchObject({ reason: 'terminated_by_signal', handoffs: 1 });
    expect(response.state.history[2]).toEqual({ role: 'user', content: 'fast: quick answer' });
  });

  it('a member whose model ignores its abortSignal is abandoned at the deadline all the same', async () => {
    const model = { lead: scriptedModel(['[ASK]', '[END]']), fast: scriptedModel(['ok']), slow: deafModel() };
    const all = await collectAdvancing(new CrewExecutor({ crew: groupCrew({ timeoutSeconds: 0.5 }), model }), 500);
    expect(memberEnds(all).map((m) => m.status)).toEqual(['succeeded', 'timed_out']);
    expect(endOf(all).reason).toBe('terminated_by_signal');
  });

  it('uses settings.parallel_timeout_seconds when the group sets no timeout', async () => {
    const slow = hangingModel();
    const model = { lead: scriptedModel(['[ASK]', '[END]']), fast: scriptedModel(['ok']), slow };
    const events = collect(new CrewExecutor({ crew: groupCrew({}, { parallelTimeoutSeconds: 5 }), model }), 'go');
    await vi.advanceTimersByTimeAsync(4_999);
    expect(slow.requests[0]!.abortSignal!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(memberEnds(await events)[1]).toEqual({
      agentId: 'slow',
      status: 'timed_out',
      code: 'CREW_PARALLEL_TIMEOUT',
    });
  });

  it('wait_for_all: true waits for every member, however late, before the deadline', async () => {
    const model = {
      lead: scriptedModel(['[ASK]', '[END]']),
      fast: scriptedModel(['first']),
      slow: scriptedModel(['late'], { delayMs: 20_000 }),
    };
    const all = await collectAdvancing(new CrewExecutor({ crew: groupCrew({ timeoutSeconds: 30 }), model }), 20_000);
    expect(memberEnds(all).map((m) => `${m.agentId}:${m.status}`)).toEqual(['fast:succeeded', 'slow:succeeded']);
    expect(endOf(all).state.history[2]!.content).toBe('slow: late\n\nfast: first');
  });

  it('regression: wait_for_all: false completes at the first success and aborts the rest, reported cancelled (the Go framework ignored wait_for_all)', async () => {
    const slow = hangingModel();
    const model = { lead: scriptedModel(['[ASK]', '[END]']), fast: scriptedModel(['winner']), slow };
    const events = await collect(new CrewExecutor({ crew: groupCrew({ waitForAll: false }), model }), 'go');
    expect(slow.requests[0]!.abortSignal!.aborted).toBe(true);
    expect(slow.requests[0]!.abortSignal!.reason).toSatisfy((r: unknown) => AbortedError.isInstance(r));
    expect(memberEnds(events)).toEqual([
      { agentId: 'fast', status: 'succeeded', code: undefined },
      { agentId: 'slow', status: 'cancelled', code: undefined },
    ]);
    expect(endOf(events).state.history[2]!.content).toBe('fast: winner');
  });

  it('wait_for_all: false with members finishing together: only the first success counts, the rest are cancelled', async () => {
    const model = scriptedModel({ lead: ['[ASK]', '[END]'], fast: ['f'], slow: ['s'] });
    const events = await collect(new CrewExecutor({ crew: groupCrew({ waitForAll: false }), model }), 'go');
    expect(memberEnds(events).map((m) => `${m.agentId}:${m.status}`)).toEqual(['slow:succeeded', 'fast:cancelled']);
    expect(events.find((e) => e.type === 'parallel_end')).toMatchObject({ succeeded: ['slow'] });
    expect(endOf(events).state.history[2]!.content).toBe('slow: s');
  });

  it('wait_for_all: false keeps waiting past a failed member for a success', async () => {
    const boom: ChatModel = { generate: () => Promise.reject(new Error('provider down')) };
    const model = {
      lead: scriptedModel(['[ASK]', '[END]']),
      fast: boom,
      slow: scriptedModel(['made it'], { delayMs: 10 }),
    };
    const all = await collectAdvancing(new CrewExecutor({ crew: groupCrew({ waitForAll: false }), model }), 10);
    expect(memberEnds(all)).toEqual([
      { agentId: 'fast', status: 'failed', code: 'CREW_MEMBER_FAILED' },
      { agentId: 'slow', status: 'succeeded', code: undefined },
    ]);
    expect(endOf(all).reason).toBe('terminated_by_signal');
  });

  it('a failed member does not fail the group when another succeeded; its error names the agent and keeps the cause', async () => {
    const cause = new Error('rate limited');
    const model = {
      lead: scriptedModel(['[ASK]', '[END]']),
      fast: scriptedModel(['fine']),
      slow: { generate: () => Promise.reject(cause) },
    };
    const events = await collect(new CrewExecutor({ crew: groupCrew(), model }), 'go');
    const failed = events.find((e) => e.type === 'parallel_member_end' && e.status === 'failed');
    expect(failed).toMatchObject({ agentId: 'slow', error: { code: 'CREW_MEMBER_FAILED' } });
    expect(failed?.type === 'parallel_member_end' && failed.error?.message).toContain('"slow"');
    expect(failed?.type === 'parallel_member_end' && failed.error?.cause).toBe(cause);
    expect(endOf(events).state.history[2]!.content).toBe('fast: fine');
  });

  it('all members failing fails the run with CREW_PARALLEL_FAILED, carrying the state and every member error', async () => {
    const model = {
      lead: scriptedModel(() => '[ASK]'),
      fast: { generate: () => Promise.reject(new Error('one')) },
      slow: hangingModel(),
    };
    const executor = new CrewExecutor({ crew: groupCrew({ timeoutSeconds: 1 }), model });
    const events = collect(executor, 'go');
    await vi.advanceTimersByTimeAsync(1000);
    const all = await events;
    const last = all.at(-1);
    expect(last?.type).toBe('error');
    if (last?.type !== 'error') return;
    expect(last.error).toBeInstanceOf(CrewRunError);
    expect(last.error).toMatchObject({ code: 'CREW_PARALLEL_FAILED', group: 'g', agentId: 'lead' });
    expect(last.error.message).toContain('fast');
    expect(last.error.message).toContain('slow timed out');
    expect(last.error.cause).toBeInstanceOf(AggregateError);
    expect((last.error.cause as AggregateError).errors.map((e: SignalyardError) => e.code)).toEqual([
      'CREW_PARALLEL_TIMEOUT',
      'CREW_MEMBER_FAILED',
    ]);
    expect(last.state.history.map((m) => m.content)).toEqual(['go', '[ASK]']);
    expect(all.at(-2)).toEqual({ type: 'parallel_end', group: 'g', succeeded: [] });

    const rejected = executor.execute('again');
    const settled = runError(rejected);
    await vi.advanceTimersByTimeAsync(1000);
    expect((await settled).code).toBe('CREW_PARALLEL_FAILED');
  });

  it('members run on copies of the history with their own AbortSignals; their replies stay out of the shared history', async () => {
    const model = scriptedModel({ lead: ['[ASK]', '[END]'], fast: ['f'], slow: ['s'] });
    const response = await new CrewExecutor({ crew: groupCrew(), model }).execute('go');
    const [fastCall, slowCall] = [
      model.calls.find((c) => c.agentId === 'fast')!,
      model.calls.find((c) => c.agentId === 'slow')!,
    ];
    expect(fastCall.abortSignal).not.toBe(slowCall.abortSignal);
    expect(fastCall.abortSignal).not.toBe(model.calls[0]!.abortSignal);
    expect(fastCall.messages).toEqual(slowCall.messages);
    expect(response.state.history.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('a member’s own signals are not acted on: the group decides where the run goes', async () => {
    const crew: CrewConfigInput = {
      ...groupCrew(),
      routing: {
        signals: {
          lead: [
            { signal: '[ASK]', target: 'g' },
            { signal: '[END]', target: '' },
          ],
          fast: [{ signal: '[STOP]', target: '' }],
        },
        parallelGroups: { g: { agents: ['slow', 'fast'], nextAgent: 'lead' } },
        agentBehaviors: { slow: { waitForSignal: true } },
      },
    };
    const model = scriptedModel({ lead: ['[ASK]', '[END]'], fast: ['[STOP]'], slow: ['pausing?'] });
    const response = await new CrewExecutor({ crew, model }).execute('go');
    expect(response).toMatchObject({ agentId: 'lead', reason: 'terminated_by_signal', handoffs: 1 });
  });

  it('without next_agent the run falls back from the agent that started the group', async () => {
    const crew: CrewConfigInput = {
      entryPoint: 'lead',
      agents: [{ id: 'lead', handoffTargets: ['judge'] }, { id: 'a' }, { id: 'judge' }],
      routing: {
        signals: { lead: [{ signal: '[ASK]', target: 'g' }], judge: [{ signal: '[END]', target: '' }] },
        parallelGroups: { g: { agents: ['a'] } },
      },
    };
    const events = await collect(
      new CrewExecutor({ crew, model: scriptedModel({ lead: ['[ASK]'], a: ['x'], judge: ['[END]'] }) }),
      'go',
    );
    expect(trace(events)).toContain('handoff:lead>judge:fallback');
    expect(endOf(events).agentId).toBe('judge');
  });

  it('without next_agent and with nobody to fall back to, the run ends with no_next_agent and the aggregated results', async () => {
    const crew: CrewConfigInput = {
      entryPoint: 'lead',
      agents: [{ id: 'lead' }],
      routing: { signals: { lead: [{ signal: '[ASK]', target: 'g' }] }, parallelGroups: { g: { agents: ['lead'] } } },
    };
    const response = await new CrewExecutor({ crew, model: scriptedModel(['[ASK]', 'self-review']) }).execute('go');
    expect(response).toMatchObject({ reason: 'no_next_agent', agentId: 'lead', content: 'lead: self-review' });
  });

  it('moving on to next_agent is a handoff and counts toward max_handoffs (running the group is not)', async () => {
    const model = scriptedModel({ lead: ['[ASK]', '[ASK]'], fast: ['1', '2'], slow: ['1', '2'] });
    const events = await collect(
      new CrewExecutor({ crew: groupCrew({}, { maxHandoffs: 2, maxRounds: 50 }), model }),
      'go',
    );
    expect(endOf(events)).toMatchObject({ reason: 'max_handoffs', handoffs: 1, content: 'slow: 2\n\nfast: 2' });
    expect(events.filter((e) => e.type === 'parallel_start')).toHaveLength(2);
  });

  it('members can use tools; their tool rounds count toward max_rounds and stay in their own history', async () => {
    const lookup = defineTool({
      name: 'lookup',
      input: z.object({ q: z.string() }),
      execute: async ({ q }) => `found ${q}`,
    });
    const crew: CrewConfigInput = {
      ...groupCrew(),
      agents: [{ id: 'lead' }, { id: 'fast', tools: ['lookup'] }, { id: 'slow' }],
    };
    const model = scriptedModel({
      lead: ['[ASK]', '[END]'],
      fast: [{ content: '', toolCalls: [{ id: 't1', name: 'lookup', arguments: { q: 'x' } }] }, 'used it'],
      slow: ['plain'],
    });
    const events = await collect(new CrewExecutor({ crew, model, tools: [lookup] }), 'go');
    expect(events.filter((e) => e.type === 'tool_result')).toEqual([
      {
        type: 'tool_result',
        agentId: 'fast',
        call: { id: 't1', name: 'lookup', arguments: { q: 'x' } },
        result: 'found x',
        isError: false,
        group: 'g',
      },
    ]);
    expect(model.calls).toHaveLength(5);
    expect(endOf(events).state.history.some((m) => m.role === 'tool')).toBe(false);
  });

  it('a member that runs out of max_rounds mid-turn fails; with no success the run ends with max_rounds', async () => {
    const crew: CrewConfigInput = {
      ...groupCrew({ agents: ['fast'] }, { maxRounds: 2 }),
      agents: [{ id: 'lead' }, { id: 'fast', tools: ['t'] }, { id: 'slow' }],
    };
    const t = defineTool({ name: 't', input: z.object({}), execute: async () => 'ok' });
    const model = scriptedModel({
      lead: ['[ASK]'],
      fast: [{ content: '', toolCalls: [{ id: '1', name: 't', arguments: {} }] }],
    });
    const events = await collect(new CrewExecutor({ crew, model, tools: [t] }), 'go');
    expect(memberEnds(events)).toEqual([{ agentId: 'fast', status: 'failed', code: 'CREW_MAX_ROUNDS' }]);
    expect(endOf(events)).toMatchObject({ reason: 'max_rounds', agentId: 'lead', content: '[ASK]' });
  });

  it('aborting the run during a group aborts every member and fails the run with ABORTED', async () => {
    const [a, b] = [hangingModel(), hangingModel()];
    const controller = new AbortController();
    const executor = new CrewExecutor({
      crew: groupCrew(),
      model: { lead: scriptedModel(['[ASK]']), fast: a, slow: b },
    });
    const settled = runError(executor.execute('go', { abortSignal: controller.signal }));
    await vi.advanceTimersByTimeAsync(0);
    controller.abort(new Error('user left'));
    const error = await settled;
    expect(error.code).toBe('ABORTED');
    expect(a.requests[0]!.abortSignal!.aborted && b.requests[0]!.abortSignal!.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears the group deadline timer when the group finishes early', async () => {
    const model = scriptedModel({ lead: ['[ASK]', '[END]'], fast: ['f'], slow: ['s'] });
    await new CrewExecutor({ crew: groupCrew({ timeoutSeconds: 1e9 }), model }).execute('go');
    expect(vi.getTimerCount()).toBe(0);
  });
});
