// settings.resume_at: where a new run (a new user message) starts — the entry point, or the
// agent whose reply ended the previous run (CrewState.lastAgentId).
import { describe, expect, it } from 'vitest';
import { CrewExecutor, type CrewConfigInput, type ResumeAt } from '@signalyard/crew';
import { POLICY, calls, eventsOf, recordingTools, roundTrip } from './crew-support-approvals.js';
import { collect, endOf, runError } from './crew-support.js';
import { MODES, inMode, scriptIn } from './handoff-modes.js';

/** triage hands off to billing or to the closer (terminal); billing finishes or pauses for the customer. */
function desk(resumeAt: ResumeAt, extra: Partial<CrewConfigInput> = {}): CrewConfigInput {
  return {
    entryPoint: 'triage',
    agents: [{ id: 'triage' }, { id: 'billing', tools: ['refund', 'lookup', 'wipe'] }, { id: 'closer' }],
    settings: { resumeAt, maxHandoffs: 5 },
    routing: {
      signals: {
        triage: [
          { signal: '[BILLING]', target: 'billing' },
          { signal: '[CLOSE]', target: 'closer' },
        ],
        billing: [
          { signal: '[DONE]', target: '' },
          { signal: '[TRIAGE]', target: 'triage' },
        ],
      },
      agentBehaviors: { closer: { isTerminal: true } },
    },
    ...extra,
  };
}

describe.each(MODES)('resume_at: last_agent (handoff_mode: %s)', (mode) => {
  it('the next message starts at the agent whose reply ended the run — across a JSON round trip of the state', async () => {
    const crew = inMode(mode, desk('last_agent'));
    const model = scriptIn(mode, crew, {
      triage: ['Billing will help [BILLING]'],
      billing: ['Refund sent [DONE]', 'You are welcome [DONE]'],
    });
    const executor = new CrewExecutor({ crew, model, tools: recordingTools().tools });
    const first = await executor.execute('charged twice');
    expect(first).toMatchObject({ agentId: 'billing', reason: 'terminated_by_signal', handoffs: 1 });
    expect(first.state.lastAgentId).toBe('billing');
    const events = await collect(executor, 'thanks!', { state: roundTrip(first.state) });
    expect(eventsOf(events, 'agent_start').map((e) => e.agentId)).toEqual(['billing']);
    expect(eventsOf(events, 'handoff')).toEqual([]);
    expect(endOf(events)).toMatchObject({ agentId: 'billing', handoffs: 0 });
    expect(model.calls.map((c) => c.agentId)).toEqual(['triage', 'billing', 'billing']);
  });

  it('a terminal agent, or a run ended by max_handoffs or max_rounds, sends the next message to the entry point', async () => {
    const crew = inMode(mode, desk('last_agent'));
    const closed = await new CrewExecutor({
      crew,
      model: scriptIn(mode, crew, { triage: ['Closing [CLOSE]'], closer: ['Case closed'] }),
      tools: recordingTools().tools,
    }).execute('bye');
    expect(closed).toMatchObject({ reason: 'terminal_agent', agentId: 'closer' });
    expect(closed.state).not.toHaveProperty('lastAgentId');

    const tight = inMode(mode, desk('last_agent', { settings: { resumeAt: 'last_agent', maxHandoffs: 2 } }));
    const limited = await new CrewExecutor({
      crew: tight,
      model: scriptIn(mode, tight, { triage: ['[BILLING]'], billing: ['back to you [TRIAGE]'] }),
      tools: recordingTools().tools,
    }).execute('go');
    expect(limited).toMatchObject({ reason: 'max_handoffs', agentId: 'billing' });
    expect(limited.state).not.toHaveProperty('lastAgentId');

    const rounds = inMode(mode, desk('last_agent', { settings: { resumeAt: 'last_agent', maxRounds: 1 } }));
    const outOfRounds = await new CrewExecutor({
      crew: rounds,
      model: scriptIn(mode, rounds, { triage: ['[BILLING]'] }),
      tools: recordingTools().tools,
    }).execute('go');
    expect(outOfRounds).toMatchObject({ reason: 'max_rounds' });
    expect(outOfRounds.state).not.toHaveProperty('lastAgentId');
  });

  it('a paused agent comes first, then resumeAgentId wins over both', async () => {
    const crew = inMode(
      mode,
      desk('last_agent', {
        routing: {
          signals: { triage: [{ signal: '[BILLING]', target: 'billing' }] },
          agentBehaviors: { billing: { waitForSignal: true }, closer: { isTerminal: true } },
        },
      }),
    );
    const model = scriptIn(mode, crew, {
      triage: ['[BILLING]', 'hello again'],
      billing: ['Which invoice?'],
      closer: ['bye'],
    });
    const executor = new CrewExecutor({ crew, model, tools: recordingTools().tools });
    const first = await executor.execute('refund');
    expect(first).toMatchObject({ reason: 'paused', pausedAgentId: 'billing' });
    expect(first.state).toMatchObject({ pausedAgentId: 'billing', lastAgentId: 'billing' });
    const elsewhere = { ...first.state, lastAgentId: 'triage' };
    const resumed = await collect(executor, 'INV-1', { state: elsewhere });
    expect(eventsOf(resumed, 'agent_start')[0]?.agentId).toBe('billing');
    const forced = await collect(executor, 'hi', { state: elsewhere, resumeAgentId: 'closer' });
    expect(eventsOf(forced, 'agent_start')[0]?.agentId).toBe('closer');
  });

  it('a run held for approval continues the batch; the state it ends with points at the agent', async () => {
    const { tools, runs } = recordingTools();
    const crew = inMode(mode, desk('last_agent', { approvals: POLICY }));
    const model = scriptIn(mode, crew, {
      triage: ['[BILLING]'],
      billing: [calls('Refunding.', ['c1', 'refund', { amount: 500 }]), 'Refunded [DONE]', 'Anything else? [DONE]'],
    });
    const executor = new CrewExecutor({ crew, model, tools });
    const paused = await executor.execute('refund 500');
    expect(paused).toMatchObject({ reason: 'awaiting_approval', agentId: 'billing' });
    expect(paused.state.lastAgentId).toBe('billing');
    const done = await executor.execute('', {
      state: roundTrip(paused.state),
      approvals: [{ id: 'ap-1', approved: true }],
    });
    expect(runs).toEqual(['refund:{"amount":500}']);
    expect(done.state.lastAgentId).toBe('billing');
    await executor.execute('more?', { state: done.state });
    expect(model.calls.map((c) => c.agentId)).toEqual(['triage', 'billing', 'billing', 'billing']);
  });
});

describe('resume_at', () => {
  it('entry (the default) starts every run at the entry point and records no lastAgentId', async () => {
    const crew = desk('entry');
    const model = scriptIn('marker', crew, { triage: ['[BILLING]', '[BILLING]'], billing: ['ok [DONE]', 'ok [DONE]'] });
    const executor = new CrewExecutor({ crew, model, tools: recordingTools().tools });
    const first = await executor.execute('one');
    expect(first.state).not.toHaveProperty('lastAgentId');
    // A lastAgentId in the state (a crew switched back from last_agent) is ignored and dropped.
    const second = await executor.execute('two', { state: { ...first.state, lastAgentId: 'billing' } });
    expect(model.calls.map((c) => c.agentId)).toEqual(['triage', 'billing', 'triage', 'billing']);
    expect(second.state).not.toHaveProperty('lastAgentId');
  });

  it('a lastAgentId naming no agent of the crew starts at the entry point, with a warning', async () => {
    const crew = desk('last_agent');
    const model = scriptIn('marker', crew, { triage: ['[BILLING]'], billing: ['[DONE]'] });
    const events = await collect(new CrewExecutor({ crew, model, tools: recordingTools().tools }), 'hi', {
      state: { history: [], lastAgentId: 'gone' },
    });
    expect(events[0]).toEqual({
      type: 'warning',
      agentId: 'triage',
      message: 'state.lastAgentId "gone" is not an agent of this crew: the run starts at the entry point "triage"',
    });
    expect(endOf(events).state.lastAgentId).toBe('billing');
  });

  it('a lastAgentId naming a terminal agent starts at the entry point (the crew may have changed)', async () => {
    const crew = desk('last_agent');
    const model = scriptIn('marker', crew, { triage: ['[CLOSE]'], closer: ['closed'] });
    await new CrewExecutor({ crew, model, tools: recordingTools().tools }).execute('hi', {
      state: { history: [], lastAgentId: 'closer' },
    });
    expect(model.calls[0]?.agentId).toBe('triage');
  });

  it('a run that fails keeps the state’s lastAgentId; a lastAgentId that is not a string is refused', async () => {
    const crew = desk('last_agent');
    const model = scriptIn('marker', crew, { billing: [] });
    const error = await runError(
      new CrewExecutor({ crew, model, tools: recordingTools().tools }).execute('hi', {
        state: { history: [], lastAgentId: 'billing' },
      }),
    );
    expect(error.code).toBe('CREW_AGENT_FAILED');
    expect(error.state.lastAgentId).toBe('billing');
    const bad = await runError(
      new CrewExecutor({ crew, model, tools: recordingTools().tools }).execute('hi', {
        state: { history: [], lastAgentId: 7 as unknown as string },
      }),
    );
    expect(bad).toMatchObject({
      code: 'CREW_ARGUMENT_INVALID',
      message: 'Invalid state.lastAgentId 7: expected an agent id',
    });
  });

  it('no_next_agent records the agent too (a crew of one)', async () => {
    const crew: CrewConfigInput = {
      entryPoint: 'solo',
      agents: [{ id: 'solo' }],
      settings: { resumeAt: 'last_agent' },
    };
    const response = await new CrewExecutor({ crew, model: scriptIn('marker', crew, ['hi']) }).execute('go');
    expect(response).toMatchObject({ reason: 'no_next_agent', state: { lastAgentId: 'solo' } });
  });
});
