// Type tests: the expectTypeOf assertions are checked by `tsc -b packages/signalyard` (test files
// are part of the package's tsconfig); the runtime parts check that the typed code also runs.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  Action,
  SignalKind,
  signal,
  type ChatMessage,
  type CheckpointStore,
  type ExecutionStrategy,
  type Outcome,
  type OutcomeJson,
  type OutcomeStatus,
  type Plugin,
  type RunnerDescription,
  type RunnerEvent,
  type SessionLock,
  type Signal,
  type SignalRoute,
  type SignalyardError,
  type StrategySnapshot,
  type Tier,
  type TimelineEntry,
} from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import type { InboundRoute, RoutingConfigInput, SessionKey } from '@signalyard/sessions';
import {
  RunnerError,
  createRunner,
  type AgentDefinition,
  type Engine,
  type EngineFn,
  type InboundMessage,
  type Runner,
  type RunnerOptions,
  type SessionCheckpointV1,
  type ApprovalDecision,
  type PendingApproval,
  type SessionCause,
  type SessionView,
  type TurnContext,
  type TurnResult,
} from 'signalyard';

describe('AgentDefinition', () => {
  it('has an id, an optional strategy FACTORY, optional agent routes and an Engine or EngineFn', () => {
    expectTypeOf<AgentDefinition['id']>().toEqualTypeOf<string>();
    expectTypeOf<AgentDefinition['strategy']>().toEqualTypeOf<(() => ExecutionStrategy) | undefined>();
    expectTypeOf<AgentDefinition['routes']>().toEqualTypeOf<readonly SignalRoute[] | undefined>();
    expectTypeOf<AgentDefinition['engine']>().toEqualTypeOf<Engine | EngineFn>();
    expectTypeOf<EngineFn>().toEqualTypeOf<(ctx: TurnContext) => Promise<TurnResult>>();
    expectTypeOf<Engine['turn']>().toEqualTypeOf<EngineFn>();
  });

  it('takes a factory, not a strategy instance', () => {
    const definition = FsmStrategy.builder().initial('idle').define();
    const ok: AgentDefinition = { id: 'main', strategy: () => definition.create(), engine: async () => ({}) };
    // @ts-expect-error -- an instance would be shared by every session
    const wrong: AgentDefinition = { id: 'main', strategy: definition.create(), engine: async () => ({}) };
    expect([ok.id, wrong.id]).toEqual(['main', 'main']);
  });

  it('types the engine context from the definition', () => {
    const agent: AgentDefinition = {
      id: 'main',
      engine: async (ctx) => {
        expectTypeOf(ctx).toEqualTypeOf<TurnContext>();
        return { output: ctx.history.length };
      },
    };
    const objectEngine: AgentDefinition = { id: 'obj', engine: { turn: async (ctx) => ({ output: ctx.sessionKey }) } };
    expect([agent.id, objectEngine.id]).toEqual(['main', 'obj']);
  });
});

describe('TurnContext and TurnResult', () => {
  it('TurnContext exposes the session, signal, history, engine state, strategy, abortSignal and emit, all read-only', () => {
    expectTypeOf<TurnContext['sessionKey']>().toEqualTypeOf<string>();
    expectTypeOf<TurnContext['agentId']>().toEqualTypeOf<string>();
    expectTypeOf<TurnContext['signal']>().toEqualTypeOf<Signal>();
    expectTypeOf<TurnContext['history']>().toEqualTypeOf<readonly ChatMessage[]>();
    expectTypeOf<TurnContext['state']>().toEqualTypeOf<unknown>();
    expectTypeOf<TurnContext['strategy']>().toEqualTypeOf<ExecutionStrategy>();
    expectTypeOf<TurnContext['abortSignal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<TurnContext['approvals']>().toEqualTypeOf<readonly ApprovalDecision[]>();
    expectTypeOf<TurnContext['pendingApprovals']>().toEqualTypeOf<readonly PendingApproval[]>();
    expectTypeOf<TurnContext['commit']>().toEqualTypeOf<(state: unknown) => Promise<void>>();
    expectTypeOf<TurnContext['emit']>().toEqualTypeOf<(event: { type: string } & Record<string, unknown>) => void>();
    expectTypeOf<TurnContext['emit']>().toBeCallableWith({ type: 'handoff', to: 'billing' });
    // @ts-expect-error -- an engine event needs a type
    expectTypeOf<TurnContext['emit']>().toBeCallableWith({ to: 'billing' });
    // @ts-expect-error -- read-only
    const mutate = (ctx: TurnContext): void => void (ctx.history = []);
    expect(typeof mutate).toBe('function');
  });

  it('TurnResult is all optional: output, messages, state, status, actions, pendingApprovals and reply', () => {
    expectTypeOf<TurnResult>().toEqualTypeOf<{
      output?: unknown;
      messages?: readonly ChatMessage[];
      state?: unknown;
      status?: 'completed' | 'paused';
      actions?: readonly Action[];
      pendingApprovals?: readonly PendingApproval[];
      reply?: string;
    }>();
    const nothing: TurnResult = {};
    expect(nothing).toEqual({});
    expectTypeOf<{ status: 'done' }>().not.toExtend<TurnResult>();
    expectTypeOf<{ actions: [ReturnType<typeof Action.transition>] }>().toExtend<TurnResult>();
  });
});

describe('Outcome', () => {
  it('has the session, the action and the deciding route, a status, and optional output and error', () => {
    expectTypeOf<Outcome['sessionKey']>().toEqualTypeOf<string>();
    expectTypeOf<Outcome['agentId']>().toEqualTypeOf<string>();
    expectTypeOf<Outcome['action']>().toEqualTypeOf<Action | undefined>();
    expectTypeOf<Outcome['decidedBy']>().toEqualTypeOf<
      { readonly tier: Tier; readonly route: SignalRoute } | undefined
    >();
    expectTypeOf<Outcome['status']>().toEqualTypeOf<
      'completed' | 'stopped' | 'rejected' | 'unrouted' | 'paused' | 'failed'
    >();
    expectTypeOf<OutcomeStatus>().toEqualTypeOf<Outcome['status']>();
    expectTypeOf<Outcome['output']>().toEqualTypeOf<unknown>();
    expectTypeOf<Outcome['error']>().toEqualTypeOf<SignalyardError | undefined>();
  });
});

describe('Runner', () => {
  it('createRunner takes RunnerOptions and returns a Runner', () => {
    expectTypeOf(createRunner).parameters.toEqualTypeOf<[options: RunnerOptions]>();
    expectTypeOf(createRunner).returns.toEqualTypeOf<Runner>();
  });

  it('has start, handle, dispatch, session, on, events and close with the contract signatures', () => {
    expectTypeOf<Runner['start']>().toEqualTypeOf<() => Promise<void>>();
    expectTypeOf<Runner['handle']>().toEqualTypeOf<
      (message: InboundMessage, opts?: { abortSignal?: AbortSignal }) => Promise<Outcome>
    >();
    expectTypeOf<Runner['dispatch']>().toEqualTypeOf<
      (
        sessionKey: SessionKey | string,
        signal: Signal,
        opts?: { agentId?: string; abortSignal?: AbortSignal },
      ) => Promise<Outcome>
    >();
    expectTypeOf<Runner['session']>().toEqualTypeOf<
      (sessionKey: SessionKey | string) => Promise<SessionView | undefined>
    >();
    expectTypeOf<Runner['on']>().toEqualTypeOf<
      (listener: (event: RunnerEvent) => void, opts?: { explainDecisions?: boolean }) => () => void
    >();
    expectTypeOf<Runner['timeline']>().toEqualTypeOf<
      (sessionKey: SessionKey | string, opts?: { limit?: number }) => TimelineEntry[]
    >();
    expectTypeOf<Runner['describe']>().toEqualTypeOf<() => RunnerDescription>();
    expectTypeOf<Runner['events']>().toEqualTypeOf<
      (opts?: { abortSignal?: AbortSignal }) => AsyncIterable<RunnerEvent>
    >();
    expectTypeOf<Runner['close']>().toEqualTypeOf<() => Promise<void>>();
  });

  it('an InboundMessage is an InboundRoute with text', () => {
    expectTypeOf<InboundMessage>().toExtend<InboundRoute>();
    expectTypeOf<InboundMessage['text']>().toEqualTypeOf<string>();
    expectTypeOf<{ channel: 'cli'; text: 'hi' }>().toExtend<InboundMessage>();
    expectTypeOf<{ channel: 'cli' }>().not.toExtend<InboundMessage>();
  });

  it('SessionView shows the checkpoint and the live queue', () => {
    expectTypeOf<SessionView>().toEqualTypeOf<{
      sessionKey: string;
      agentId: string;
      version: number;
      strategy: StrategySnapshot;
      history: readonly ChatMessage[];
      engineState: unknown;
      pendingApprovals: readonly PendingApproval[];
      busy: boolean;
      queued: number;
    }>();
  });

  it('RunnerOptions has the contract options', () => {
    expectTypeOf<RunnerOptions['agents']>().toEqualTypeOf<readonly AgentDefinition[]>();
    expectTypeOf<RunnerOptions['routing']>().toEqualTypeOf<RoutingConfigInput | undefined>();
    expectTypeOf<RunnerOptions['plugins']>().toEqualTypeOf<readonly Plugin[] | undefined>();
    expectTypeOf<RunnerOptions['store']>().toEqualTypeOf<CheckpointStore | undefined>();
    expectTypeOf<RunnerOptions['lock']>().toEqualTypeOf<SessionLock | undefined>();
    expectTypeOf<RunnerOptions['maxConcurrentSessions']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<RunnerOptions['maxHistoryMessages']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<RunnerOptions['closeTimeoutMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<{ agents: [] }>().toExtend<RunnerOptions>();
  });

  it('SessionCheckpointV1 is { v: 1, agentId, strategy, history, engine, pendingApprovals?, staleApprovals?, cause?, inboxSeq?, inboxPartial?, inboxOutcomes? }', () => {
    expectTypeOf<SessionCheckpointV1>().toEqualTypeOf<{
      readonly v: 1;
      readonly agentId: string;
      readonly strategy: StrategySnapshot;
      readonly history: readonly ChatMessage[];
      readonly engine: unknown;
      readonly pendingApprovals?: readonly PendingApproval[];
      readonly staleApprovals?: readonly { readonly id: string; readonly reason: string }[];
      readonly cause?: SessionCause;
      readonly inboxSeq?: string;
      readonly inboxPartial?: { readonly seq: string; readonly receiptId: string };
      readonly inboxOutcomes?: readonly {
        readonly receiptId: string;
        readonly seq: string;
        readonly outcome: OutcomeJson;
      }[];
    }>();
  });

  it('narrows a RunnerEvent by its type and an error with RunnerError.isInstance', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: async () => ({ output: 1 }) }] });
    const statuses: OutcomeStatus[] = [];
    runner.on((event) => {
      if (event.type === 'outcome') {
        expectTypeOf(event.outcome).toEqualTypeOf<Outcome>();
        statuses.push(event.outcome.status);
      }
    });
    await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'hi'));
    await runner.close();
    const error: unknown = await runner.handle({ channel: 'cli', text: 'late' }).catch((e: unknown) => e);
    if (RunnerError.isInstance(error)) {
      expectTypeOf(error).toEqualTypeOf<RunnerError>();
      expect(error.code).toBe('RUNNER_CLOSED');
    } else {
      expect.unreachable('expected a RunnerError');
    }
    expect(statuses).toEqual(['completed']);
    expect(Action.Continue.type).toBe('continue');
  });
});
