// What the Runner saves for replays (replay.md): every final save writes `cause.summary` (a
// RunSummary) and `cause.signal.payload` (JSON, capped at maxCausePayloadBytes, through redact).
import { ConfigError, MemoryCheckpointStore, SignalKind, signal, type SessionCause, type Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { FsmStrategy } from '@signalyard/fsm';
import { definePipeline } from '@signalyard/pipeline';
import { Action, createRunner, crewEngine, pipelineEngine, type RunnerOptions } from 'signalyard';
import { describe, expect, it } from 'vitest';
import { causePayload } from '../src/cause-payload.js';

const dm = (text: string) => ({ channel: 'web', peer: { kind: 'dm' as const, id: 'u1' }, text });

async function lastCause(r: ReturnType<typeof createRunner>, key: string): Promise<SessionCause | undefined> {
  for await (const v of r.history(key, { limit: 1 })) return v.cause;
  return undefined;
}

const deskCrew = (mode: 'marker' | 'tool') =>
  parseCrewConfig(`
entry_point: triage
agents:
  - id: triage
  - id: billing
    tools: [refund]
routing:
  signals:
    triage:
      - { signal: "[TO_BILLING]", target: billing, description: billing questions }
    billing:
      - { signal: "[DONE]", target: "" }
settings:
  handoff_mode: ${mode}
approvals:
  rules:
    - { name: small, tool: refund, when: [{ path: amount, lte: 100 }], decision: allow }
  default: ask
`);

const CLOSE = SignalKind.custom('close');

const refund: Tool = { name: 'refund', parameters: { type: 'object' }, execute: () => Promise.resolve('refunded') };

describe('cause.summary: what a turn did', () => {
  it('a crew turn with a marker handoff, a tool call and an allow: route, action, handoffs, tool calls, approvals, reply without markers', async () => {
    const model = scriptedModel({
      triage: ['Sending you to billing. [TO_BILLING]'],
      billing: [
        { content: 'Refunding.', toolCalls: [{ id: 'c1', name: 'refund', arguments: { amount: 40 } }] },
        'Refunded 40. [DONE]',
      ],
    });
    const r = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(deskCrew('marker'), { model, tools: [refund] }) }],
    });
    const outcome = await r.handle(dm('refund my 40'));
    expect(outcome.status).toBe('completed');
    const cause = await lastCause(r, outcome.sessionKey);
    expect(cause?.summary).toEqual({
      status: 'completed',
      action: 'continue',
      handoffs: [{ from: 'triage', to: 'billing', signal: '[TO_BILLING]' }],
      toolCalls: [{ agentId: 'billing', name: 'refund', arguments: { amount: 40 } }],
      approvals: [{ tool: 'refund', decision: 'allow', rule: 'small' }],
      reply: 'Refunded 40.',
    });
    expect(cause?.signal?.payload).toEqual(dm('refund my 40'));
    expect(cause?.partial).toBeUndefined();
    await r.close();
  });

  it('a tool-mode transfer is a handoff with the signal it stands for, not a tool call', async () => {
    const model = scriptedModel({
      triage: [{ content: '', toolCalls: [{ id: 't1', name: 'transfer_to_billing', arguments: {} }] }],
      billing: [{ content: 'Hello from billing.', toolCalls: [{ id: 'f1', name: 'finish', arguments: {} }] }],
    });
    const r = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(deskCrew('tool'), { model, tools: [refund] }) }],
    });
    const outcome = await r.handle(dm('billing please'));
    const summary = (await lastCause(r, outcome.sessionKey))?.summary;
    expect(summary?.handoffs).toEqual([{ from: 'triage', to: 'billing', signal: '[TO_BILLING]' }]);
    expect(summary?.toolCalls).toEqual([]);
    expect(summary?.reply).toBe('Hello from billing.');
    await r.close();
  });

  it('an ask holds the call: status paused, the call and the decision recorded', async () => {
    const model = scriptedModel({
      triage: ['[TO_BILLING]'],
      billing: [{ content: 'Refunding.', toolCalls: [{ id: 'c1', name: 'refund', arguments: { amount: 400 } }] }],
    });
    const r = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(deskCrew('marker'), { model, tools: [refund] }) }],
    });
    const outcome = await r.handle(dm('refund 400'));
    expect(outcome.status).toBe('paused');
    const summary = (await lastCause(r, outcome.sessionKey))?.summary;
    expect(summary).toMatchObject({
      status: 'paused',
      toolCalls: [{ agentId: 'billing', name: 'refund', arguments: { amount: 400 } }],
      approvals: [{ tool: 'refund', decision: 'ask' }],
    });
    await r.close();
  });

  it('a parallel group: members recorded as handoffs with the group, the version marked partial (parallel_members)', async () => {
    const crew = parseCrewConfig(`
entry_point: lead
agents:
  - id: lead
  - id: law
  - id: tax
  - id: summary
routing:
  signals:
    lead:
      - { signal: "[ASK]", target: experts }
    summary:
      - { signal: "[DONE]", target: "" }
  parallel_groups:
    experts: { agents: [law, tax], next_agent: summary }
`);
    const model = scriptedModel({ lead: ['[ASK]'], law: ['Legal.'], tax: ['Deductible.'], summary: ['Both. [DONE]'] });
    const r = createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model }) }] });
    const outcome = await r.handle(dm('can I?'));
    const cause = await lastCause(r, outcome.sessionKey);
    expect(cause?.partial).toBe('parallel_members');
    expect(cause?.summary?.handoffs).toEqual(
      expect.arrayContaining([
        { from: 'lead', to: 'law', signal: 'experts' },
        { from: 'lead', to: 'tax', signal: 'experts' },
      ]),
    );
    expect(cause?.summary?.reply).toBe('Both.');
    await r.close();
  });

  it('a pipeline turn is marked partial (pipeline_stage_calls): its stages’ model calls are not in the history', async () => {
    const p = definePipeline({ name: 'review', stages: [{ name: 'plan', run: () => ({ ok: true }) }] });
    const r = createRunner({ agents: [{ id: 'review', engine: pipelineEngine(p) }] });
    const outcome = await r.handle(dm('review this'));
    const cause = await lastCause(r, outcome.sessionKey);
    expect(cause?.partial).toBe('pipeline_stage_calls');
    expect(cause?.summary?.reply).toBe('{"ok":true}');
    await r.close();
  });

  it('a transition by a named strategy route: route, action and the FSM state after it', async () => {
    const fsm = FsmStrategy.builder()
      .initial('open')
      .transition('open', 'close', 'closed')
      .route({ kind: CLOSE, action: Action.transition('close'), name: 'closing' })
      .define();
    const r = createRunner({ agents: [{ id: 'desk', strategy: () => fsm.create(), engine: async () => ({}) }] });
    const outcome = await r.dispatch('agent:desk:main', signal(CLOSE, { to: 'closed' }));
    expect(outcome.status).toBe('completed');
    const cause = await lastCause(r, 'agent:desk:main');
    expect(cause?.summary).toEqual({
      status: 'completed',
      route: { tier: 'strategy', name: 'closing' },
      action: 'transition:close',
      handoffs: [],
      toolCalls: [],
      approvals: [],
      fsmState: 'closed',
    });
    expect(cause?.signal).toEqual({ kind: CLOSE, payload: { to: 'closed' } });
    await r.close();
  });

  it('a failed turn records its status; a commit (not a final save) carries no summary', async () => {
    const store = new MemoryCheckpointStore();
    const r = createRunner({
      store,
      agents: [
        {
          id: 'desk',
          engine: async (ctx) => {
            await ctx.commit({ half: true });
            throw new Error('boom');
          },
        },
      ],
    });
    const outcome = await r.handle(dm('go'));
    expect(outcome.status).toBe('failed');
    const causes: (SessionCause | undefined)[] = [];
    for await (const v of r.history(outcome.sessionKey)) causes.push(v.cause);
    expect(causes.map((c) => c?.summary)).toEqual([undefined]); // only the commit was saved
    await r.close();
  });

  it('a runner default (unrouted user message → continue) has an action and no route', async () => {
    const r = createRunner({
      agents: [{ id: 'desk', engine: async () => ({ messages: [{ role: 'assistant' as const, content: 'hi' }] }) }],
    });
    const outcome = await r.handle(dm('hello'));
    const summary = (await lastCause(r, outcome.sessionKey))?.summary;
    expect(summary).toEqual({
      status: 'completed',
      action: 'continue',
      handoffs: [],
      toolCalls: [],
      approvals: [],
      reply: 'hi',
    });
    await r.close();
  });

  it('an engine’s own reply wins over its messages; a reply that is not a string is TURN_RESULT_INVALID', async () => {
    let reply: unknown = 'shown';
    const r = createRunner({
      agents: [
        { id: 'desk', engine: () => ({ messages: [{ role: 'assistant', content: 'raw [X]' }], reply }) as never },
      ],
    });
    const first = await r.handle(dm('a'));
    expect((await lastCause(r, first.sessionKey))?.summary?.reply).toBe('shown');
    reply = 42;
    const bad = await r.handle(dm('b'));
    expect(bad.status).toBe('failed');
    expect(bad.error?.code).toBe('TURN_RESULT_INVALID');
    expect(bad.error?.message).toContain('reply');
    await r.close();
  });

  it('a checkpoint of an earlier release (no payload, no summary) loads and the session goes on', async () => {
    const store = new MemoryCheckpointStore();
    await store.save(
      'agent:desk:main',
      {
        v: 1,
        agentId: 'desk',
        strategy: { type: 'direct' },
        history: [{ role: 'user', content: 'old' }],
        engine: null,
        cause: {
          at: '2026-01-01T00:00:00.000Z',
          signal: { kind: 'user_message', text: 'old' },
          status: 'completed',
          summary: { approvals: [] },
        },
      },
      0,
    );
    const r = createRunner({ store, agents: [{ id: 'desk', engine: async () => ({}) }] });
    const outcome = await r.dispatch('agent:desk:main', signal('user_message', 'new'));
    expect(outcome.status).toBe('completed');
    expect((await r.session('agent:desk:main'))?.history.map((m) => m.content)).toEqual(['old', 'new']);
    expect((await lastCause(r, 'agent:desk:main'))?.signal).toEqual({
      kind: 'user_message',
      text: 'new',
      payload: 'new',
    });
    await r.close();
  });
});

describe('cause.signal.payload: capped, redacted, JSON only', () => {
  const echo = (opts: Partial<RunnerOptions> = {}) =>
    createRunner({ agents: [{ id: 'desk', engine: async () => ({}) }], ...opts });

  it('redact replaces strings (with their path) before the cause keeps them; the history keeps what arrived', async () => {
    const paths: string[] = [];
    const r = echo({
      redact: (value, path) => {
        paths.push(path.join('.'));
        return value.replace(/\d{4}-\d{4}-\d{4}-\d{4}/g, '[card]');
      },
    });
    const outcome = await r.handle(dm('my card is 4111-1111-1111-1111'));
    const cause = await lastCause(r, outcome.sessionKey);
    expect(cause?.signal?.payload).toMatchObject({ text: 'my card is [card]' });
    expect(JSON.stringify(cause?.signal?.payload)).not.toContain('4111');
    expect(paths).toContain('text');
    expect(paths).toContain('peer.id');
    await r.close();
  });

  it('a payload whose JSON is longer than maxCausePayloadBytes is left out (payloadOmitted: too_large)', async () => {
    const r = echo({ maxCausePayloadBytes: 64 });
    await r.dispatch('agent:desk:main', signal('user_message', 'x'.repeat(63)));
    expect((await lastCause(r, 'agent:desk:main'))?.signal?.payloadOmitted).toBe('too_large');
    await r.dispatch('agent:desk:main', signal('user_message', 'x'.repeat(62)));
    expect((await lastCause(r, 'agent:desk:main'))?.signal?.payload).toBe('x'.repeat(62));
    await r.close();
  });

  it('the default cap is 16 KiB, counted in UTF-8 bytes', () => {
    expect(causePayload('é'.repeat(8191), 16 * 1024, undefined)).toEqual({ payload: 'é'.repeat(8191) });
    expect(causePayload('é'.repeat(8192), 16 * 1024, undefined)).toEqual({ omitted: 'too_large' });
    expect(causePayload({ a: 'é'.repeat(8100) }, 16 * 1024, (v) => v)).toEqual({ payload: { a: 'é'.repeat(8100) } });
    expect(causePayload({ a: 'é'.repeat(8200) }, 16 * 1024, undefined)).toEqual({ omitted: 'too_large' });
  });

  it('JSON semantics: undefined and functions left out, toJSON used, BigInt / NaN / cycles are not_json', () => {
    const when = new Date(Date.UTC(2026, 0, 1));
    expect(causePayload({ a: undefined, f: () => 1, d: when, l: [undefined, 1] }, 1000, undefined)).toEqual({
      payload: { d: '2026-01-01T00:00:00.000Z', l: [null, 1] },
    });
    expect(causePayload({ n: 10n }, 1000, undefined)).toEqual({ omitted: 'not_json' });
    expect(causePayload([Number.NaN], 1000, undefined)).toEqual({ omitted: 'not_json' });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(causePayload(cycle, 1_000_000, undefined)).toEqual({ omitted: 'not_json' });
    expect(causePayload(undefined, 1000, undefined)).toEqual({});
    const proto = JSON.parse('{"__proto__":{"x":1}}') as unknown;
    const kept = causePayload(proto, 1000, undefined).payload as Record<string, unknown>;
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(Object.keys(kept)).toEqual(['__proto__']);
  });

  it('maxCausePayloadBytes 0 keeps no payload', async () => {
    const r = echo({ maxCausePayloadBytes: 0 });
    await r.dispatch('agent:desk:main', signal('user_message', { text: 'hi' }));
    expect((await lastCause(r, 'agent:desk:main'))?.signal).toEqual({
      kind: 'user_message',
      text: 'hi',
      payloadOmitted: 'too_large',
    });
    await r.close();
  });

  it('bad options are ConfigError naming them', () => {
    const bad = (opts: Record<string, unknown>) => {
      try {
        echo(opts);
      } catch (error) {
        expect(ConfigError.isInstance(error)).toBe(true);
        return (error as ConfigError).message;
      }
      throw new Error('accepted');
    };
    expect(bad({ maxCausePayloadBytes: -1 })).toContain('maxCausePayloadBytes');
    expect(bad({ maxCausePayloadBytes: 1.5 })).toContain('a whole number of bytes');
    expect(bad({ redact: 'yes' })).toContain('redact');
  });
});

describe('the outcome event carries the final save’s cause (for recorders)', () => {
  it('cause (with its summary) and each model request on agent_response, both non-enumerable', async () => {
    const model = scriptedModel({ triage: ['Sending you to billing. [TO_BILLING]'], billing: ['Done. [DONE]'] });
    const seen: { cause?: SessionCause; keys: string[] }[] = [];
    const requests: unknown[] = [];
    const r = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(deskCrew('marker'), { model, tools: [refund] }) }],
      plugins: [
        {
          name: 'watch',
          setup: (ctx) => {
            ctx.on((e) => {
              if (e.type === 'outcome') seen.push({ ...(e.cause && { cause: e.cause }), keys: Object.keys(e) });
              if (e.type === 'engine_event' && e.event.type === 'agent_response') {
                requests.push(e.event.request);
                expect(Object.keys(e.event)).not.toContain('request');
              }
            });
          },
        },
      ],
    });
    const outcome = await r.handle(dm('refund my 40'));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.keys).toEqual(['type', 'outcome']);
    expect(seen[0]?.cause).toEqual(await lastCause(r, outcome.sessionKey));
    expect(seen[0]?.cause?.summary).toMatchObject({ status: 'completed', reply: 'Done.' });
    expect(requests.map((q) => (q as { agentId?: string }).agentId)).toEqual(['triage', 'billing']);
    // The next signal saves nothing (no route): its outcome carries no cause, not the one before.
    const unrouted = await r.dispatch(outcome.sessionKey, signal(SignalKind.custom('nobody_handles_this'), {}));
    expect(unrouted.status).toBe('unrouted');
    expect(seen).toHaveLength(2);
    expect(seen[1]?.cause).toBeUndefined();
    await r.close();
  });
});
