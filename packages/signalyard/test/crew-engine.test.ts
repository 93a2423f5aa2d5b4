import { MemoryCheckpointStore, type RunnerEvent } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig, type CrewResponse } from '@signalyard/crew';
import { createRunner, crewEngine } from 'signalyard';
import { describe, expect, it } from 'vitest';

const crewYaml = `
entry_point: triage
agents:
  - id: triage
    system_prompt: "Route the customer."
  - id: billing
  - id: clerk
routing:
  signals:
    triage:
      - { signal: "[ROUTE_BILLING]", target: billing }
    billing:
      - { signal: "[NEED_INFO]", target: clerk }
      - { signal: "[DONE]", target: "" }
    clerk:
      - { signal: "[ROUTE]", target: billing }
  agent_behaviors:
    clerk: { wait_for_signal: true }
`;

const dm = (text: string) => ({ channel: 'telegram', peer: { kind: 'dm' as const, id: '9' }, text });

describe('crewEngine', () => {
  it('runs handoffs inside one turn and keeps the history once, in the session', async () => {
    const model = scriptedModel({ triage: ['Let me route you. [ROUTE_BILLING]'], billing: ['Refund issued. [DONE]'] });
    const runner = createRunner({
      agents: [{ id: 'support', engine: crewEngine(parseCrewConfig(crewYaml), { model }) }],
    });
    const events: RunnerEvent[] = [];
    runner.on((e) => events.push(e));
    const o = await runner.handle(dm('I was charged twice'));
    expect(o.status).toBe('completed');
    const response = o.output as CrewResponse;
    expect(response).toMatchObject({ agentId: 'billing', reason: 'terminated_by_signal', handoffs: 1 });
    const view = await runner.session(o.sessionKey);
    expect(view?.history.map((m) => [m.role, m.name, m.content])).toEqual([
      ['user', undefined, 'I was charged twice'],
      ['assistant', 'triage', 'Let me route you. [ROUTE_BILLING]'],
      ['assistant', 'billing', 'Refund issued. [DONE]'],
    ]);
    // The model saw the system prompt and the user message once.
    expect(model.calls[0]?.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(
      events.filter((e) => e.type === 'engine_event').map((e) => (e as { event: { type: string } }).event.type),
    ).toContain('handoff');
    await runner.close();
  });

  it('a wait_for_signal pause survives a new runner over the same store and resumes on the next message', async () => {
    const store = new MemoryCheckpointStore();
    const model = scriptedModel({
      triage: ['[ROUTE_BILLING]'],
      billing: ['I need your order number. [NEED_INFO]', 'Found it, refunded. [DONE]'],
      clerk: ['Please send the order number.', 'Thanks, passing this on. [ROUTE]'],
    });
    const crew = parseCrewConfig(crewYaml);
    const first = createRunner({ agents: [{ id: 'support', engine: crewEngine(crew, { model }) }], store });
    const paused = await first.handle(dm('refund please'));
    expect(paused.status).toBe('paused');
    expect((paused.output as CrewResponse).pausedAgentId).toBe('clerk');
    expect((await first.session(paused.sessionKey))?.engineState).toEqual({ pausedAgentId: 'clerk' });
    await first.close();

    const second = createRunner({ agents: [{ id: 'support', engine: crewEngine(crew, { model }) }], store });
    const resumed = await second.handle(dm('order A-1001'));
    // The clerk (the paused agent) answers first and routes back to billing, which finishes.
    const response = resumed.output as CrewResponse;
    expect(model.calls.at(-2)?.agentId).toBe('clerk');
    expect(response.agentId).toBe('billing');
    expect(resumed.status).toBe('completed');
    expect((await second.session(resumed.sessionKey))?.engineState).toEqual({});
    const history = (await second.session(resumed.sessionKey))?.history ?? [];
    expect(history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['refund please', 'order A-1001']);
    await second.close();
  });

  it('a failing model fails the turn with the crew error and keeps the last good checkpoint', async () => {
    const model = scriptedModel({
      triage: [
        () => {
          throw new Error('provider down');
        },
      ],
    });
    const runner = createRunner({
      agents: [{ id: 'support', engine: crewEngine(parseCrewConfig(crewYaml), { model }) }],
    });
    const o = await runner.handle(dm('hello'));
    expect(o.status).toBe('failed');
    expect(o.error?.code).toBe('CREW_AGENT_FAILED');
    expect((await runner.session(o.sessionKey))?.history.map((m) => m.content)).toEqual(['hello']);
    await runner.close();
  });

  it('refuses bad options', () => {
    expect(() => crewEngine(parseCrewConfig(crewYaml), null as never)).toThrow(/crewEngine needs options/);
  });
});

describe('crewEngine streamed through the Runner', () => {
  it('streams each agent’s visible text with its source, never a marker; plain handle streams nothing', async () => {
    const markers = ['[ROUTE_BILLING]', '[DONE]', '[NEED_INFO]', '[ROUTE]'];
    const model = scriptedModel(
      { triage: ['Let me route you. [ROUTE_BILLING]'], billing: ['Refund issued. [DONE]', 'Again. [DONE]'] },
      { streamChunkChars: 3 },
    );
    const runner = createRunner({
      agents: [{ id: 'support', engine: crewEngine(parseCrewConfig(crewYaml), { model }) }],
    });
    const events = [];
    for await (const event of runner.stream(dm('I was charged twice'))) events.push(event);
    const deltas = events.flatMap((e) => (e.type === 'text_delta' ? [e] : []));
    const text = (agent: string) =>
      deltas
        .filter((d) => d.source?.crewAgentId === agent)
        .map((d) => d.delta)
        .join('');
    expect(text('triage')).toBe('Let me route you.');
    expect(text('billing')).toBe('Refund issued.');
    expect(deltas.find((d) => d.source?.crewAgentId === 'billing')?.source?.path).toEqual(['triage', 'billing']);
    let prefix = '';
    for (const d of deltas) {
      prefix += d.delta;
      for (const marker of markers) expect(prefix).not.toContain(marker);
    }
    expect(events.some((e) => e.type === 'engine_event' && e.event.type === 'handoff')).toBe(true);
    const outcome = events.at(-1);
    expect(outcome).toMatchObject({ type: 'outcome', outcome: { status: 'completed' } });
    // The session keeps the raw replies; the transcript hides the markers and shows the handoff.
    const key = (outcome as { outcome: { sessionKey: string } }).outcome.sessionKey;
    expect(await runner.transcript(key)).toEqual([
      { type: 'user', text: 'I was charged twice' },
      { type: 'assistant', agentId: 'triage', text: 'Let me route you.' },
      { type: 'handoff', from: 'triage', to: 'billing', via: 'signal' },
      { type: 'assistant', agentId: 'billing', text: 'Refund issued.' },
    ]);
    // A plain handle: the model is called with generate, no text deltas reach plugins.
    const seen: RunnerEvent[] = [];
    runner.on((e) => seen.push(e));
    await runner.handle(dm('and again'));
    expect(seen.some((e) => e.type === 'engine_event' && e.event.type === 'text_delta')).toBe(false);
    await runner.close();
  });

  it('the transcript shows a parallel group’s members (not its collected results) and the handoff via the group', async () => {
    const groupCrew = parseCrewConfig(`
entry_point: lead
agents:
  - id: lead
    handoff_targets: [summary]
  - id: law
  - id: tax
  - id: summary
routing:
  signals:
    lead:
      - { signal: "[ASK_EXPERTS]", target: experts }
      - { signal: "[ASK_ALONE]", target: loners }
    summary:
      - { signal: "[DONE]", target: "" }
      - { signal: "[AGAIN]", target: experts }
  parallel_groups:
    experts: { agents: [law, tax], next_agent: summary }
    loners: { agents: [law] }
`);
    const model = scriptedModel({
      lead: ['Asking both. [ask_experts]', 'Asking law. [ASK_ALONE]'],
      law: ['Legal. [DONE]', 'Fine. [AGAIN]', 'Alone.'],
      tax: ['Deductible.', 'Still.'],
      summary: ['Both agree. [AGAIN]', 'Twice agreed. [DONE]', 'Done. [DONE]'],
    });
    const runner = createRunner({ agents: [{ id: 'desk', engine: crewEngine(groupCrew, { model }) }] });
    const first = await runner.handle(dm('Can I deduct it?'));
    expect(first.status).toBe('completed');
    // The raw history keeps the groups' collected results as the crew's own user messages.
    const history = (await runner.session(first.sessionKey))?.history ?? [];
    expect(history.map((m) => `${m.role}:${m.content}`)).toContain('user:law: Legal. [DONE]\n\ntax: Deductible.');
    const second = await runner.handle(dm('And alone?'));
    expect(second.status).toBe('completed');
    // The collected results never show as a message; each member's visible reply does (markers
    // hidden), after its handoff from the agent that started the group (decisions-wave3.md §4).
    const experts = (from: string) => [
      { type: 'handoff', from, to: 'law', via: 'parallel', group: 'experts' },
      { type: 'handoff', from, to: 'tax', via: 'parallel', group: 'experts' },
    ];
    expect(await runner.transcript(first.sessionKey)).toEqual([
      { type: 'user', text: 'Can I deduct it?' },
      { type: 'assistant', agentId: 'lead', text: 'Asking both.' },
      ...experts('lead'),
      { type: 'assistant', agentId: 'law', text: 'Legal.', group: 'experts' },
      { type: 'assistant', agentId: 'tax', text: 'Deductible.', group: 'experts' },
      { type: 'handoff', from: 'lead', to: 'summary', via: 'parallel' },
      { type: 'assistant', agentId: 'summary', text: 'Both agree.' },
      ...experts('summary'),
      { type: 'assistant', agentId: 'law', text: 'Fine.', group: 'experts' },
      { type: 'assistant', agentId: 'tax', text: 'Still.', group: 'experts' },
      { type: 'handoff', from: 'summary', to: 'summary', via: 'parallel' },
      { type: 'assistant', agentId: 'summary', text: 'Twice agreed.' },
      { type: 'user', text: 'And alone?' },
      { type: 'assistant', agentId: 'lead', text: 'Asking law.' },
      { type: 'handoff', from: 'lead', to: 'law', via: 'parallel', group: 'loners' },
      { type: 'assistant', agentId: 'law', text: 'Alone.', group: 'loners' },
      { type: 'handoff', from: 'lead', to: 'summary', via: 'fallback' },
      { type: 'assistant', agentId: 'summary', text: 'Done.' },
    ]);
    await runner.close();
  });
});
