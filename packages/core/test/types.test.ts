// Type tests: the expectTypeOf assertions are checked by `tsc -b` (test files are part of the
// package's tsconfig); the runtime parts check that the typed code also does what it says.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  Action,
  ConfigError,
  DirectStrategy,
  MemoryCheckpointStore,
  SignalKind,
  SignalyardError,
  formatAction,
  isAction,
  isSignalKind,
  isSignalyardError,
  signal,
  streamChat,
  decideApproval,
  type approvalPolicySchema,
} from '@signalyard/core';
import type {
  ActionType,
  Checkpoint,
  Clock,
  CheckpointStore,
  MemoryCheckpointStoreOptions,
  SessionLock,
  ExecutionStrategy,
  Outcome,
  Plugin,
  PluginContext,
  RouteContext,
  RunnerEvent,
  Signal,
  SignalRoute,
  StrategySnapshot,
  TransitionResult,
  ApprovalDecisionKind,
  ApprovalPolicy,
  ApprovalVerdict,
  ChatModel,
  ChatRequest,
  ChatStreamPart,
  Tool,
  ToolCall,
  ToolContext,
} from '@signalyard/core';

describe('SignalKind (type)', () => {
  it('is the five built-in kinds plus the custom:${string} template literal', () => {
    expectTypeOf<SignalKind>().toEqualTypeOf<
      'user_message' | 'tool_result' | 'tool_approval' | 'stop' | 'timer' | `custom:${string}`
    >();
    expectTypeOf<'custom:webhook'>().toExtend<SignalKind>();
    expectTypeOf<'custom'>().not.toExtend<SignalKind>();
    expectTypeOf<'Stop'>().not.toExtend<SignalKind>();
    expectTypeOf<string>().not.toExtend<SignalKind>();
  });

  it('the constants have their literal types and custom() returns the template literal', () => {
    expectTypeOf(SignalKind.Stop).toEqualTypeOf<'stop'>();
    expectTypeOf(SignalKind.UserMessage).toEqualTypeOf<'user_message'>();
    const kind = SignalKind.custom('webhook');
    expectTypeOf(kind).toEqualTypeOf<`custom:${string}`>();
    expect(kind).toBe('custom:webhook');
  });

  it('isSignalKind narrows unknown to SignalKind', () => {
    const value: unknown = 'timer';
    if (isSignalKind(value)) expectTypeOf(value).toEqualTypeOf<SignalKind>();
    expect(isSignalKind(value)).toBe(true);
  });
});

describe('Signal (type)', () => {
  it('has a readonly kind and payload, with payload unknown by default', () => {
    expectTypeOf<Signal>().toEqualTypeOf<{ readonly kind: SignalKind; readonly payload: unknown }>();
    expectTypeOf<Signal<{ text: string }>['payload']>().toEqualTypeOf<{ text: string }>();
  });

  it('signal() infers its payload type, and null when there is none', () => {
    const withPayload = signal(SignalKind.UserMessage, { text: 'hi' });
    expectTypeOf(withPayload).toEqualTypeOf<Signal<{ text: string }>>();
    const withoutPayload = signal(SignalKind.Stop);
    expectTypeOf(withoutPayload).toEqualTypeOf<Signal<null>>();
    expect(withoutPayload.payload).toBeNull();
  });

  it('signal() only takes a SignalKind', () => {
    // @ts-expect-error: 'bogus' is not a SignalKind
    expect(() => signal('bogus')).toThrow(SignalyardError);
  });

  it('a signal is read-only', () => {
    const s = signal(SignalKind.Timer, 1);
    expect(() => {
      // @ts-expect-error: kind is readonly
      s.kind = 'stop';
    }).toThrow(TypeError);
  });
});

describe('Action (type)', () => {
  // Exhaustive over the union: adding an Action variant without handling it here fails tsc.
  function describeAction(action: Action): string {
    switch (action.type) {
      case 'continue':
      case 'graceful_stop':
      case 'force_stop':
        expectTypeOf(action).toEqualTypeOf<
          { readonly type: 'continue' } | { readonly type: 'graceful_stop' } | { readonly type: 'force_stop' }
        >();
        return action.type;
      case 'transition':
        expectTypeOf(action).toEqualTypeOf<{ readonly type: 'transition'; readonly target: string }>();
        return `go ${action.target}`;
      case 'custom':
        expectTypeOf(action).toEqualTypeOf<{ readonly type: 'custom'; readonly name: string }>();
        return `run ${action.name}`;
      case 'reject':
        expectTypeOf(action).toEqualTypeOf<{ readonly type: 'reject'; readonly reason: string }>();
        return `refuse ${action.reason}`;
      default:
        expectTypeOf(action).toBeNever();
        return 'unreachable';
    }
  }

  it('is a union discriminated by type that narrows in a switch', () => {
    expect(
      [Action.Continue, Action.transition('check'), Action.custom('sum'), Action.reject('busy')].map(describeAction),
    ).toEqual(['continue', 'go check', 'run sum', 'refuse busy']);
  });

  it('ActionType lists the six action types', () => {
    expectTypeOf<ActionType>().toEqualTypeOf<
      'continue' | 'graceful_stop' | 'force_stop' | 'transition' | 'custom' | 'reject'
    >();
  });

  it('constants and factories are typed as Action', () => {
    expectTypeOf(Action.Continue).toEqualTypeOf<Action>();
    expectTypeOf<typeof Action.transition>().toEqualTypeOf<(target: string) => Action>();
    expectTypeOf<typeof Action.custom>().returns.toEqualTypeOf<Action>();
    expectTypeOf<typeof Action.reject>().parameters.toEqualTypeOf<[reason: string]>();
  });

  it('a transition without a target, or an unknown type, is not an Action', () => {
    expectTypeOf<{ type: 'transition' }>().not.toExtend<Action>();
    expectTypeOf<{ type: 'pause' }>().not.toExtend<Action>();
  });

  it('isAction narrows unknown to Action; formatAction takes Action | undefined', () => {
    const value: unknown = { type: 'reject', reason: 'busy' };
    if (isAction(value)) expectTypeOf(value).toEqualTypeOf<Action>();
    expectTypeOf(formatAction).parameter(0).toEqualTypeOf<Action | undefined>();
    expect(isAction(value)).toBe(true);
  });
});

describe('SignalRoute (type)', () => {
  it('a predicate is (signal: Signal, ctx: RouteContext) => boolean, optional', () => {
    expectTypeOf<SignalRoute['predicate']>().toEqualTypeOf<
      ((signal: Signal, ctx: RouteContext) => boolean) | undefined
    >();
    expectTypeOf<NonNullable<SignalRoute['predicate']>>().parameters.toEqualTypeOf<[Signal, RouteContext]>();
    expectTypeOf<NonNullable<SignalRoute['predicate']>>().returns.toEqualTypeOf<boolean>();
  });

  it('kind and action are required; predicate, priority and name are optional', () => {
    expectTypeOf<{ kind: 'stop'; action: Action }>().toExtend<SignalRoute>();
    expectTypeOf<{ kind: 'stop' }>().not.toExtend<SignalRoute>();
    expectTypeOf<{ action: Action }>().not.toExtend<SignalRoute>();
    expectTypeOf<SignalRoute['priority']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<SignalRoute['name']>().toEqualTypeOf<string | undefined>();
  });

  it('RouteContext carries the optional session key and agent id', () => {
    expectTypeOf<RouteContext>().toEqualTypeOf<{ readonly sessionKey?: string; readonly agentId?: string }>();
  });

  it('a route with a predicate reading the context type-checks and runs', () => {
    const route: SignalRoute = {
      kind: SignalKind.UserMessage,
      name: 'only-main',
      priority: 10,
      predicate: (s, ctx) => s.kind === 'user_message' && ctx.agentId === 'main',
      action: Action.Continue,
    };
    expect(route.predicate?.(signal(SignalKind.UserMessage, 'hi'), { agentId: 'main' })).toBe(true);
    expect(route.predicate?.(signal(SignalKind.UserMessage, 'hi'), {})).toBe(false);
  });
});

describe('Plugin (type)', () => {
  it('a plugin with only a name is a Plugin', () => {
    const minimal: Plugin = { name: 'minimal' };
    expectTypeOf({ name: 'minimal' }).toExtend<Plugin>();
    expect(minimal.name).toBe('minimal');
  });

  it('name is required and readonly', () => {
    expectTypeOf<{ signalRoutes: () => SignalRoute[] }>().not.toExtend<Plugin>();
    expectTypeOf<Plugin['name']>().toEqualTypeOf<string>();
    const plugin: Plugin = { name: 'p' };
    // @ts-expect-error: name is readonly
    plugin.name = 'q';
  });

  it('signalRoutes, setup and dispose are optional with their signatures', () => {
    expectTypeOf<Plugin['signalRoutes']>().toEqualTypeOf<(() => readonly SignalRoute[]) | undefined>();
    expectTypeOf<Plugin['setup']>().toEqualTypeOf<((ctx: PluginContext) => void | Promise<void>) | undefined>();
    expectTypeOf<Plugin['dispose']>().toEqualTypeOf<(() => void | Promise<void>) | undefined>();
  });

  it('a full plugin type-checks, with on() returning an unsubscribe function', async () => {
    const seen: string[] = [];
    const plugin: Plugin = {
      name: 'full',
      signalRoutes: () => [{ kind: SignalKind.custom('webhook'), action: Action.custom('hook') }],
      setup(ctx) {
        const unsubscribe = ctx.on((event) => seen.push(event.type));
        expectTypeOf(unsubscribe).toEqualTypeOf<() => void>();
        ctx.handleCustomAction('hook', ({ sessionKey, agentId, signal: s, abortSignal }) => {
          expectTypeOf(abortSignal).toEqualTypeOf<AbortSignal>();
          return `${sessionKey}/${agentId}/${s.kind}`;
        });
      },
      async dispose() {},
    };
    const listeners: ((event: RunnerEvent) => void)[] = [];
    const ctx: PluginContext = {
      on: (listener) => {
        listeners.push(listener);
        return () => {};
      },
      handleCustomAction: () => {},
    };
    await plugin.setup?.(ctx);
    for (const l of listeners) l({ type: 'warning', message: 'hello' });
    expect(seen).toEqual(['warning']);
    expect(plugin.signalRoutes?.()).toHaveLength(1);
  });
});

describe('RunnerEvent (type)', () => {
  function summarize(event: RunnerEvent): string {
    switch (event.type) {
      case 'signal_received':
      case 'unrouted':
        return `${event.type} ${event.signal.kind}`;
      case 'route_decided':
        expectTypeOf(event.action).toEqualTypeOf<Action | undefined>();
        return `decided ${formatAction(event.action)} by ${event.tier ?? 'default'}`;
      case 'transition_applied':
        expectTypeOf(event.result).toEqualTypeOf<TransitionResult>();
        return `${event.result.from} -> ${event.result.to}`;
      case 'turn_start':
      case 'turn_end':
        return `${event.type} ${event.status ?? ''}`.trim();
      case 'engine_event':
        expectTypeOf(event.event.type).toEqualTypeOf<string>();
        return `engine ${event.event.type}`;
      case 'outcome':
        expectTypeOf(event.outcome).toEqualTypeOf<Outcome>();
        return `outcome ${event.outcome.status}`;
      case 'warning':
        expectTypeOf(event.cause).toEqualTypeOf<unknown>();
        return `warning ${event.message}`;
      case 'session_rewound':
        expectTypeOf(event.rewoundTo).toEqualTypeOf<number>();
        return `rewound to ${event.rewoundTo}`;
      default:
        expectTypeOf(event).toBeNever();
        return 'unreachable';
    }
  }

  it('is discriminated by type', () => {
    expectTypeOf<RunnerEvent['type']>().toEqualTypeOf<
      | 'signal_received'
      | 'route_decided'
      | 'transition_applied'
      | 'turn_start'
      | 'turn_end'
      | 'engine_event'
      | 'outcome'
      | 'unrouted'
      | 'warning'
      | 'session_rewound'
    >();
    const s = signal(SignalKind.Stop);
    const events: RunnerEvent[] = [
      { type: 'signal_received', sessionKey: 'k', agentId: 'a', signal: s },
      { type: 'route_decided', sessionKey: 'k', agentId: 'a', signal: s, action: Action.GracefulStop, tier: 'agent' },
      { type: 'transition_applied', sessionKey: 'k', agentId: 'a', result: new DirectStrategy().execute('go') },
      { type: 'turn_end', sessionKey: 'k', agentId: 'a', status: 'completed' },
      { type: 'engine_event', sessionKey: 'k', agentId: 'a', event: { type: 'handoff', to: 'b' } },
      {
        type: 'outcome',
        outcome: { sessionKey: 'k', agentId: 'a', action: undefined, decidedBy: undefined, status: 'unrouted' },
      },
      { type: 'warning', message: 'listener threw', cause: new Error('x') },
    ];
    expect(events.map(summarize)).toEqual([
      'signal_received stop',
      'decided graceful_stop by agent',
      'direct -> direct',
      'turn_end completed',
      'engine handoff',
      'outcome unrouted',
      'warning listener threw',
    ]);
  });

  it('an event with a field of another variant does not type-check', () => {
    // @ts-expect-error: an outcome event carries an outcome, not a signal
    const bad: RunnerEvent = { type: 'outcome', signal: signal(SignalKind.Stop) };
    expect(bad.type).toBe('outcome');
  });
});

describe('CheckpointStore (type)', () => {
  it('has the contract’s method signatures, with close optional', () => {
    expectTypeOf<CheckpointStore['load']>().toEqualTypeOf<(key: string) => Promise<Checkpoint | undefined>>();
    expectTypeOf<CheckpointStore['save']>().toEqualTypeOf<
      (key: string, data: unknown, expectedVersion: number) => Promise<number>
    >();
    expectTypeOf<CheckpointStore['delete']>().toEqualTypeOf<(key: string) => Promise<void>>();
    expectTypeOf<CheckpointStore['list']>().toEqualTypeOf<(prefix?: string) => AsyncIterable<string>>();
    expectTypeOf<CheckpointStore['close']>().toEqualTypeOf<(() => Promise<void>) | undefined>();
  });

  it('Checkpoint is { version, data, updatedAt }', () => {
    expectTypeOf<Checkpoint>().toEqualTypeOf<{
      readonly version: number;
      readonly data: unknown;
      readonly updatedAt: string;
    }>();
  });

  it('MemoryCheckpointStore is a CheckpointStore, and a store without close is one too', async () => {
    expectTypeOf<MemoryCheckpointStore>().toExtend<CheckpointStore>();
    const minimal: CheckpointStore = {
      load: async () => undefined,
      save: async (_key, _data, expected) => expected + 1,
      delete: async () => {},
      list: async function* () {},
    };
    expect(await minimal.save('k', 1, 0)).toBe(1);
    const store: CheckpointStore = new MemoryCheckpointStore();
    expect(await store.save('k', 1, 0)).toBe(1);
  });

  it('MemoryCheckpointStore implements history and loadVersion, and takes { keepVersions?, clock? }', () => {
    expectTypeOf<MemoryCheckpointStore['history']>().toEqualTypeOf<
      (key: string, opts?: { before?: number; limit?: number }) => AsyncIterable<Checkpoint>
    >();
    expectTypeOf<MemoryCheckpointStore['loadVersion']>().toEqualTypeOf<
      (key: string, version: number) => Promise<Checkpoint | undefined>
    >();
    expectTypeOf<ConstructorParameters<typeof MemoryCheckpointStore>>().toEqualTypeOf<
      [options?: MemoryCheckpointStoreOptions]
    >();
    expectTypeOf<MemoryCheckpointStoreOptions>().toEqualTypeOf<{ keepVersions?: number; clock?: Clock }>();
  });
});

describe('SessionLock (type)', () => {
  it('withLock passes fn a lockSignal; fn may ignore it, and a lock written before it existed still is a SessionLock', async () => {
    type Fn = Parameters<SessionLock['withLock']>[1];
    expectTypeOf<Parameters<Fn>>().toEqualTypeOf<[lockSignal?: AbortSignal]>();
    expectTypeOf<Parameters<SessionLock['withLock']>[2]>().toEqualTypeOf<{ abortSignal?: AbortSignal } | undefined>();
    const seen: (AbortSignal | undefined)[] = [];
    const current: SessionLock = {
      withLock: async (_key, fn) => fn(new AbortController().signal),
    };
    const older: SessionLock = {
      async withLock<T>(_key: string, fn: () => Promise<T>): Promise<T> {
        return fn();
      },
    };
    for (const lock of [current, older]) {
      expect(await lock.withLock('k', async () => 1)).toBe(1);
      expect(
        await lock.withLock('k', async (lockSignal) => {
          seen.push(lockSignal);
          return 'seen';
        }),
      ).toBe('seen');
    }
    expect(seen[0]).toBeInstanceOf(AbortSignal);
    expect(seen[1]).toBeUndefined();
  });
});

describe('ExecutionStrategy (type)', () => {
  it('has the contract’s method signatures', () => {
    expectTypeOf<ExecutionStrategy['execute']>().toEqualTypeOf<(action: string, input?: unknown) => TransitionResult>();
    expectTypeOf<ExecutionStrategy['canExecute']>().toEqualTypeOf<(action: string, input?: unknown) => boolean>();
    expectTypeOf<ExecutionStrategy['signalRoutes']>().toEqualTypeOf<() => readonly SignalRoute[]>();
    expectTypeOf<ExecutionStrategy['snapshot']>().toEqualTypeOf<() => StrategySnapshot>();
    expectTypeOf<ExecutionStrategy['restore']>().toEqualTypeOf<(snapshot: StrategySnapshot) => void>();
  });

  it('TransitionResult and StrategySnapshot have the contract’s shapes', () => {
    expectTypeOf<TransitionResult>().toEqualTypeOf<{
      readonly from: string;
      readonly action: string;
      readonly to: string;
      readonly guard?: string;
    }>();
    expectTypeOf<StrategySnapshot['type']>().toEqualTypeOf<string>();
    expectTypeOf<{ type: 'fsm'; state: string }>().toExtend<StrategySnapshot>();
    expectTypeOf<{ state: string }>().not.toExtend<StrategySnapshot>();
  });

  it('DirectStrategy implements ExecutionStrategy', () => {
    expectTypeOf<DirectStrategy>().toExtend<ExecutionStrategy>();
    const strategy: ExecutionStrategy = new DirectStrategy();
    expect(strategy.execute('x')).toEqual({ from: 'direct', action: 'x', to: 'direct' });
  });
});

describe('errors (type)', () => {
  it('isSignalyardError and isInstance narrow unknown', () => {
    const error: unknown = new ConfigError({ problems: [{ path: 'a', message: 'bad' }] });
    if (isSignalyardError(error)) expectTypeOf(error.code).toEqualTypeOf<string>();
    if (ConfigError.isInstance(error)) {
      expectTypeOf(error.problems[0]).toExtend<
        { readonly path: string; readonly message: string; readonly line?: number } | undefined
      >();
      expectTypeOf(error.file).toEqualTypeOf<string | undefined>();
    }
    expect(isSignalyardError(error, 'CONFIG_INVALID')).toBe(true);
  });
});

describe('streaming and approvals (type)', () => {
  it('streamChat and decideApproval have the contract’s signatures', () => {
    expectTypeOf(streamChat).toEqualTypeOf<(model: ChatModel, request: ChatRequest) => AsyncIterable<ChatStreamPart>>();
    expectTypeOf(decideApproval).parameters.toEqualTypeOf<
      [ApprovalPolicy | undefined, ToolCall, Tool | undefined, ToolContext]
    >();
    expectTypeOf(decideApproval).returns.toEqualTypeOf<Promise<ApprovalVerdict>>();
    expectTypeOf<ApprovalVerdict>().toEqualTypeOf<{
      readonly decision: ApprovalDecisionKind;
      readonly reason?: string;
      readonly rule?: number;
      readonly ruleName?: string;
    }>();
    expectTypeOf<ReturnType<(typeof approvalPolicySchema)['parse']>>().toEqualTypeOf<ApprovalPolicy>();
    expect(typeof streamChat).toBe('function');
  });
});
