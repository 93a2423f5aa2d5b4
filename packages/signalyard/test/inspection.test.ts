// The Runner's inspection API: explained decisions (createRunner({ explainDecisions }),
// on(listener, { explainDecisions })), timeline(sessionKey, { limit }) and describe().
import { describe, expect, it } from 'vitest';
import {
  Action,
  ConfigError,
  SignalKind,
  signal,
  type Plugin,
  type RunnerEvent,
  type SignalRoute,
} from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { FsmStrategy } from '@signalyard/fsm';
import { definePipeline } from '@signalyard/pipeline';
import { expectCode, throwsCode } from '@signalyard/test-utils';
import { createRunner, crewEngine, pipelineEngine, type AgentDefinition, type Engine } from 'signalyard';
import { heldEngine, thrownBy } from './support.js';

const DESK = 'agent:desk:main';
const says = (text: string) => signal(SignalKind.UserMessage, { text });

const desk = FsmStrategy.builder()
  .initial('new')
  .transition('new', 'open', 'open')
  .transition('open', 'open', 'open')
  .transition('open', 'hold', 'busy')
  .route({ kind: SignalKind.Stop, name: 'halt', action: Action.ForceStop })
  .route({ kind: SignalKind.UserMessage, name: 'busy-gate', action: Action.reject('busy') }, { inStates: ['busy'] })
  .define();

/** The desk's agent routes: `open-ticket` (priority 10, counting its predicate's calls) beats `fallback-chat`. */
function deskAgent(calls = { n: 0 }): AgentDefinition {
  const routes: SignalRoute[] = [
    { kind: SignalKind.UserMessage, name: 'fallback-chat', action: Action.Continue },
    {
      kind: SignalKind.UserMessage,
      name: 'open-ticket',
      priority: 10,
      predicate: () => {
        calls.n++;
        return true;
      },
      action: Action.transition('open'),
    },
  ];
  return { id: 'desk', strategy: () => desk.create(), routes, engine: () => Promise.resolve({}) };
}

const plugin: Plugin = {
  name: 'gate',
  signalRoutes: () => [{ kind: SignalKind.UserMessage, name: 'plugin-default', action: Action.reject('plugin') }],
};

function decisions(runner: { on: (l: (e: RunnerEvent) => void) => () => void }) {
  const seen: Extract<RunnerEvent, { type: 'route_decided' }>[] = [];
  runner.on((e) => {
    if (e.type === 'route_decided') seen.push(e);
  });
  return seen;
}

describe('explained decisions', () => {
  it('createRunner({ explainDecisions: true }): route_decided carries the routes considered, from one routing pass', async () => {
    const calls = { n: 0 };
    const runner = createRunner({ agents: [deskAgent(calls)], plugins: [plugin], explainDecisions: true });
    const seen = decisions(runner);
    const outcome = await runner.dispatch(DESK, says('printer on fire'));
    expect(outcome.decidedBy?.route.name).toBe('open-ticket');
    expect(calls.n).toBe(1); // the deciding predicate ran once: routing did not run twice
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ tier: 'agent', routeName: 'open-ticket' });
    expect(seen[0]?.considered?.map((c) => [c.tier, c.route.name, c.outcome])).toEqual([
      ['strategy', 'busy-gate', 'predicate_false'],
      ['agent', 'open-ticket', 'matched'],
      ['agent', 'fallback-chat', 'outranked'],
      ['plugin', 'plugin-default', 'shadowed_by_higher_tier'],
    ]);
    await runner.close();
  });

  it('is off by default: no considered, and the plain match() path runs', async () => {
    const calls = { n: 0 };
    const runner = createRunner({ agents: [deskAgent(calls)] });
    const seen = decisions(runner);
    await runner.dispatch(DESK, says('hello'));
    expect(seen[0]).toMatchObject({ tier: 'agent', routeName: 'open-ticket' });
    expect('considered' in (seen[0] as object)).toBe(false);
    expect(calls.n).toBe(1);
    await runner.close();
  });

  it('on(listener, { explainDecisions: true }) turns it on while that listener is subscribed', async () => {
    const runner = createRunner({ agents: [deskAgent()] });
    const seen = decisions(runner);
    const first = runner.on(() => undefined, { explainDecisions: true });
    const second = runner.on(() => undefined, { explainDecisions: true });
    await runner.dispatch(DESK, says('one'));
    first();
    first(); // idempotent: the other listener still asks
    await runner.dispatch(DESK, says('two'));
    second();
    await runner.dispatch(DESK, says('three'));
    expect(seen.map((e) => e.considered?.length)).toEqual([3, 3, undefined]);
    await runner.close();
  });

  it('explains stops routed on arrival and the members of a collected batch too', async () => {
    const held = heldEngine();
    const runner = createRunner({
      agents: [{ id: 'desk', strategy: () => desk.create(), engine: held.engine, whenBusy: 'collect' }],
      explainDecisions: true,
    });
    const seen = decisions(runner);
    const first = runner.dispatch(DESK, says('first'));
    const turn = await held.turn(0);
    const second = runner.dispatch(DESK, says('second'));
    const stop = runner.dispatch(DESK, signal(SignalKind.Stop, null));
    turn.finish({});
    await Promise.all([first, second, stop]);
    const stopDecision = seen.find((e) => e.signal.kind === 'stop');
    expect(stopDecision).toMatchObject({ tier: 'strategy', routeName: 'halt' });
    expect(stopDecision?.considered?.map((c) => c.outcome)).toEqual(['matched']);
    expect(seen.filter((e) => e.signal.kind === 'user_message').every((e) => Array.isArray(e.considered))).toBe(true);
    await runner.close();
  });

  it('a predicate that throws fails the signal as before, with no considered list', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'desk',
          routes: [
            {
              kind: SignalKind.UserMessage,
              name: 'broken',
              predicate: () => {
                throw new Error('boom');
              },
              action: Action.Continue,
            },
          ],
          engine: () => Promise.resolve({}),
        },
      ],
      explainDecisions: true,
    });
    const seen = decisions(runner);
    const outcome = await runner.dispatch(DESK, says('x'));
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('ROUTE_PREDICATE_FAILED');
    expect(seen).toEqual([expect.objectContaining({ action: undefined })]);
    expect(seen[0]?.considered).toBeUndefined();
    await runner.close();
  });

  it('refuses bad options: explainDecisions not a boolean, on() options not { explainDecisions?: boolean }', () => {
    const error = thrownBy(() =>
      createRunner({ agents: [deskAgent()], explainDecisions: 'yes' as unknown as boolean }),
    );
    expect(ConfigError.isInstance(error) && error.problems).toEqual([
      { path: 'explainDecisions', message: 'expected true or false, got "yes"' },
    ]);
    const runner = createRunner({ agents: [deskAgent()] });
    throwsCode(() => runner.on(() => undefined, 'x' as never), 'RUNNER_INPUT_INVALID');
    const bad = throwsCode(
      () => runner.on(() => undefined, { explainDecisions: 1 as unknown as boolean }),
      'RUNNER_INPUT_INVALID',
    );
    expect(bad.message).toContain('{ explainDecisions?: boolean }');
  });
});

describe('runner.timeline()', () => {
  it("holds a session's recent events newest first: arrival, decision with its explanation, transition, outcome with duration", async () => {
    const runner = createRunner({ agents: [deskAgent()], explainDecisions: true, timeline: true });
    await runner.dispatch(DESK, says('one'));
    await runner.dispatch(DESK, says('two'));
    const entries = runner.timeline(DESK);
    expect(entries.map((e) => e.event.type)).toEqual([
      'outcome',
      'transition_applied',
      'route_decided',
      'signal_received',
      'outcome',
      'transition_applied',
      'route_decided',
      'signal_received',
    ]);
    const seqs = entries.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(entries[0]?.durationMs).toBeGreaterThanOrEqual(0);
    expect(entries[1]?.durationMs).toBeUndefined();
    expect(Number.isNaN(Date.parse(entries[0]?.at ?? ''))).toBe(false);
    const decided = entries[2]?.event;
    expect(decided?.type === 'route_decided' && decided.considered?.length).toBe(3);
    expect(runner.timeline(DESK, { limit: 2 }).map((e) => e.seq)).toEqual(seqs.slice(0, 2));
    await runner.close();
  });

  it('keeps handoffs, tool calls and pipeline stages (engine events), not streamed text or turn_start / turn_end', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'desk',
          engine: (ctx) => {
            ctx.emit({ type: 'handoff', from: 'triage', to: 'billing' });
            ctx.emitText('partial');
            return Promise.resolve({ messages: [{ role: 'assistant', content: 'done' }] });
          },
        },
      ],
      timeline: true,
    });
    await runner.dispatch(DESK, says('hi'));
    const types = runner
      .timeline(DESK)
      .map((e) => (e.event.type === 'engine_event' ? e.event.event.type : e.event.type));
    expect(types).toEqual(['outcome', 'handoff', 'route_decided', 'signal_received']);
    await runner.close();
  });

  it('records an entry before any listener sees its event: a listener finds its event as the newest entry', async () => {
    const runner = createRunner({ agents: [deskAgent()], timeline: true });
    const found: boolean[] = [];
    runner.on((e) => {
      if (e.type === 'warning') return;
      const key = e.type === 'outcome' ? e.outcome.sessionKey : e.sessionKey;
      found.push(runner.timeline(key, { limit: 1 })[0]?.event === e);
    });
    await runner.dispatch(DESK, says('hi'));
    expect(found).toEqual([true, true, true, true]); // signal_received, route_decided, transition_applied, outcome
    await runner.close();
  });

  it('is empty for a session with no events, after deleteSession, and with timeline: false', async () => {
    const runner = createRunner({ agents: [deskAgent()], timeline: { limit: 50 } });
    expect(runner.timeline('agent:desk:never')).toEqual([]);
    await runner.dispatch(DESK, says('hi'));
    expect(runner.timeline(DESK)).not.toEqual([]);
    await runner.deleteSession(DESK);
    expect(runner.timeline(DESK)).toEqual([]);
    await runner.close();
    const off = createRunner({ agents: [deskAgent()], timeline: false });
    await off.dispatch(DESK, says('hi'));
    expect(off.timeline(DESK)).toEqual([]);
    await off.close();
  });

  it('by default records only while an inspecting listener is subscribed, keeping what it recorded', async () => {
    const runner = createRunner({ agents: [deskAgent()] });
    await runner.dispatch(DESK, says('before'));
    expect(runner.timeline(DESK)).toEqual([]);
    const seen: boolean[] = [];
    const off = runner.on(
      (e) => {
        if (e.type === 'signal_received') seen.push(runner.timeline(DESK, { limit: 1 })[0]?.event === e);
      },
      { explainDecisions: true },
    );
    const plain = runner.on(() => undefined); // a plain listener starts nothing
    await runner.dispatch(DESK, says('while inspected'));
    expect(seen).toEqual([true]);
    const recorded = runner.timeline(DESK);
    expect(recorded.map((e) => e.event.type)).toContain('route_decided');
    off();
    await runner.dispatch(DESK, says('after'));
    expect(runner.timeline(DESK)).toEqual(recorded);
    plain();
    await runner.close();
  });

  it('records rewinds', async () => {
    const runner = createRunner({ agents: [deskAgent()], timeline: true });
    await runner.dispatch(DESK, says('one'));
    await runner.dispatch(DESK, says('two'));
    await runner.rewind(DESK, 1);
    expect(runner.timeline(DESK, { limit: 1 })[0]?.event).toMatchObject({ type: 'session_rewound', rewoundTo: 1 });
    await runner.close();
  });

  it('refuses a malformed session key or limit with RUNNER_INPUT_INVALID, and bad timeline options with CONFIG_INVALID', () => {
    const runner = createRunner({ agents: [deskAgent()] });
    expect(throwsCode(() => runner.timeline('not a key'), 'RUNNER_INPUT_INVALID').message).toContain('not a key');
    for (const limit of [0, -1, 1.5, '3', Number.NaN]) {
      const error = throwsCode(() => runner.timeline(DESK, { limit: limit as number }), 'RUNNER_INPUT_INVALID');
      expect(error.message).toContain('integer >= 1');
    }
    throwsCode(() => runner.timeline(DESK, null as never), 'RUNNER_INPUT_INVALID');
    for (const timeline of [{ limit: 0 }, { sessions: 1.5 }, { keep: 3 }, 'all', 1]) {
      const error = thrownBy(() => createRunner({ agents: [deskAgent()], timeline: timeline as never }));
      expectCode(error, 'CONFIG_INVALID');
      expect(ConfigError.isInstance(error) && error.problems[0]?.path.startsWith('timeline')).toBe(true);
    }
  });
});

const crewYaml = `
entry_point: triage
agents:
  - id: triage
  - id: billing
routing:
  signals:
    triage:
      - { signal: "[ROUTE_BILLING]", target: billing }
    billing:
      - { signal: "[DONE]", target: "" }
`;

describe('runner.describe()', () => {
  it('lists each agent with its strategy, routes by tier in evaluation order, and its FSM, crew and pipeline diagrams', () => {
    const review = definePipeline({ name: 'review', stages: [{ name: 'plan', run: () => ({}) }] });
    const runner = createRunner({
      agents: [
        deskAgent(),
        { id: 'support', engine: crewEngine(parseCrewConfig(crewYaml), { model: scriptedModel({}) }) },
        { id: 'review', engine: pipelineEngine(review) },
      ],
      plugins: [plugin],
    });
    const { agents } = runner.describe();
    expect(agents.map((a) => [a.id, a.strategy])).toEqual([
      ['desk', 'fsm'],
      ['support', 'direct'],
      ['review', 'direct'],
    ]);
    expect(agents[0]?.routes).toEqual([
      { name: 'halt', kind: 'stop', tier: 'strategy', priority: 0, action: 'force_stop', conditional: false },
      {
        name: 'busy-gate',
        kind: 'user_message',
        tier: 'strategy',
        priority: 0,
        action: 'reject(busy)',
        conditional: true,
      },
      {
        name: 'open-ticket',
        kind: 'user_message',
        tier: 'agent',
        priority: 10,
        action: 'transition(open)',
        conditional: true,
      },
      {
        name: 'fallback-chat',
        kind: 'user_message',
        tier: 'agent',
        priority: 0,
        action: 'continue',
        conditional: false,
      },
      {
        name: 'plugin-default',
        kind: 'user_message',
        tier: 'plugin',
        priority: 0,
        action: 'reject(plugin)',
        conditional: false,
      },
    ]);
    expect(agents[0]?.diagrams).toEqual({ fsm: desk.toMermaid() });
    expect(agents[1]?.diagrams.crew).toMatch(/^flowchart LR\n/);
    expect(agents[1]?.diagrams.crew).toContain('a0 -->|"[ROUTE_BILLING]"| a1');
    expect(agents[2]?.diagrams).toEqual({ pipeline: review.toMermaid() });
    expect(agents[2]?.routes.map((r) => r.tier)).toEqual(['plugin']);
  });

  it("takes any engine's diagrams(), and draws nothing for an engine function or a strategy without a diagram", () => {
    const engine: Engine = {
      turn: () => Promise.resolve({}),
      diagrams: () => ({ pipeline: 'flowchart TD\n  a --> b' }),
    };
    const runner = createRunner({
      agents: [
        { id: 'own', engine },
        { id: 'plain', engine: () => Promise.resolve({}) },
      ],
    });
    const [own, plain] = runner.describe().agents;
    expect(own?.diagrams).toEqual({ pipeline: 'flowchart TD\n  a --> b' });
    expect(plain).toEqual({ id: 'plain', strategy: 'direct', routes: [], diagrams: {} });
  });

  it('throws STRATEGY_FACTORY_FAILED when a strategy factory throws', () => {
    const runner = createRunner({
      agents: [
        {
          id: 'broken',
          strategy: () => {
            throw new Error('no strategy today');
          },
          engine: () => Promise.resolve({}),
        },
      ],
    });
    expect(throwsCode(() => runner.describe(), 'STRATEGY_FACTORY_FAILED').message).toContain('no strategy today');
  });
});
