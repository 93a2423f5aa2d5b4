import { describe, expect, it } from 'vitest';
import { Action, SignalKind, type SignalRoute } from '@signalyard/core';
import { ClosureGuard, FsmDefinition, FsmDefinitionError, FsmStrategy, FsmStrategyBuilder } from '@signalyard/fsm';
import { catchError, definitionProblems } from './support.js';

const busy: SignalRoute = { kind: SignalKind.UserMessage, action: Action.reject('busy') };
const yes = (): boolean => true;

describe('validation: each problem on its own', () => {
  const cases: readonly (readonly [string, () => FsmStrategyBuilder, RegExp])[] = [
    ['no initial state', () => FsmStrategy.builder().transition('a', 'go', 'b'), /initial/],
    ['an empty initial state', () => FsmStrategy.builder().initial(''), /initial/],
    ['a non-string initial state', () => FsmStrategy.builder().initial(7 as never), /initial/],
    ['an initial state that is not declared', () => FsmStrategy.builder().state('a').initial('ghost'), /ghost/],
    [
      'a transition from an undeclared state',
      () => FsmStrategy.builder().state('a').state('b').initial('a').transition('ghost', 'go', 'b'),
      /ghost/,
    ],
    [
      'a transition to an undeclared state',
      () => FsmStrategy.builder().state('a').state('b').initial('a').transition('a', 'go', 'ghost'),
      /ghost/,
    ],
    [
      'two unguarded transitions for one (from, action) at the default priority',
      () => FsmStrategy.builder().initial('a').transition('a', 'go', 'b').transition('a', 'go', 'c'),
      /ambiguous/,
    ],
    [
      'two unguarded transitions for one (from, action) at priority 0, one of them explicit',
      () => FsmStrategy.builder().initial('a').transition('a', 'go', 'b').transition('a', 'go', 'c', { priority: 0 }),
      /ambiguous/,
    ],
    [
      'two unguarded transitions for one (from, action) at priority 7, to the same state',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', 'go', 'b', { priority: 7 })
          .transition('a', 'go', 'b', { priority: 7 }),
      /ambiguous/,
    ],
    [
      'a transition out of a final state',
      () =>
        FsmStrategy.builder()
          .state('a')
          .state('done', { final: true })
          .initial('a')
          .transition('a', 'end', 'done')
          .transition('done', 'again', 'a'),
      /final/,
    ],
    [
      'a route whose inStates names an unknown state (states declared)',
      () =>
        FsmStrategy.builder()
          .state('a')
          .initial('a')
          .route(busy, { inStates: ['a', 'ghost'] }),
      /ghost/,
    ],
    [
      'a route whose inStates names an unknown state (states inferred)',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', 'go', 'b')
          .route(busy, { inStates: ['ghost'] }),
      /ghost/,
    ],
    [
      'a route with an empty inStates',
      () => FsmStrategy.builder().initial('a').route(busy, { inStates: [] }),
      /inStates/,
    ],
    [
      'a non-string name in inStates',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .route(busy, { inStates: [3] as never }),
      /3/,
    ],
    [
      'a fractional priority',
      () => FsmStrategy.builder().initial('a').transition('a', 'go', 'b', { priority: 1.5 }),
      /priority/,
    ],
    [
      'a NaN priority',
      () => FsmStrategy.builder().initial('a').transition('a', 'go', 'b', { priority: Number.NaN }),
      /priority/,
    ],
    [
      'an infinite priority',
      () => FsmStrategy.builder().initial('a').transition('a', 'go', 'b', { priority: Infinity }),
      /priority/,
    ],
    [
      'a string priority',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', 'go', 'b', { priority: '1' as never }),
      /priority/,
    ],
    ['an empty from', () => FsmStrategy.builder().initial('a').transition('', 'go', 'a'), /\bfrom\b/],
    ['an empty action', () => FsmStrategy.builder().initial('a').transition('a', '', 'a'), /\baction\b/],
    ['an empty to', () => FsmStrategy.builder().initial('a').transition('a', 'go', ''), /\bto\b/],
    [
      'a non-string action',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', null as never, 'a'),
      /\baction\b/,
    ],
    ['an empty state name', () => FsmStrategy.builder().state('').state('a').initial('a'), /state/],
    [
      'a non-string state name',
      () =>
        FsmStrategy.builder()
          .state({} as never)
          .state('a')
          .initial('a'),
      /state/,
    ],
    [
      'a state declared twice',
      () => FsmStrategy.builder().state('a').state('a').initial('a'),
      /more than once|duplicate/,
    ],
    [
      'a non-boolean final',
      () =>
        FsmStrategy.builder()
          .state('a', { final: 'yes' as never })
          .initial('a'),
      /final/,
    ],
    [
      'a non-string description',
      () =>
        FsmStrategy.builder()
          .state('a', { description: 5 as never })
          .initial('a'),
      /description/,
    ],
    [
      'a guard object with an empty name',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', 'go', 'b', { guard: { name: '', evaluate: yes } }),
      /guard/,
    ],
    [
      'a guard object without evaluate',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', 'go', 'b', { guard: { name: 'g' } as never }),
      /guard/,
    ],
    [
      'a guard object whose evaluate is not a function',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', 'go', 'b', { guard: { name: 'g', evaluate: true } as never }),
      /guard/,
    ],
    [
      'a guard that is a number',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', 'go', 'b', { guard: 42 as never }),
      /guard/,
    ],
    [
      'a guard that is null',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', 'go', 'b', { guard: null as never }),
      /guard/,
    ],
    [
      'a guard that is a string',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .transition('a', 'go', 'b', { guard: 'g' as never }),
      /guard/,
    ],
    [
      'a route that is null',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .route(null as never),
      /route/,
    ],
    [
      'a route with an unknown kind',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .route({ kind: 'shout', action: Action.Continue } as never),
      /kind/,
    ],
    [
      'a route with a malformed action',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .route({ kind: SignalKind.Stop, action: { type: 'explode' } } as never),
      /action/,
    ],
    [
      'a route with an empty reject reason',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .route({ kind: SignalKind.Stop, action: { type: 'reject', reason: '' } } as never),
      /action/,
    ],
    [
      'a route with a non-function predicate',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .route({ ...busy, predicate: true } as never),
      /predicate/,
    ],
    [
      'a route with a fractional priority',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .route({ ...busy, priority: 0.5 }),
      /priority/,
    ],
    [
      'a route with a non-string name',
      () =>
        FsmStrategy.builder()
          .initial('a')
          .route({ ...busy, name: 5 } as never),
      /name/,
    ],
  ];

  it.each(cases)('%s is exactly one problem', (_label, make, pattern) => {
    const problems = definitionProblems(make());
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(pattern);
  });

  it.each(cases)('build() reports %s the same way as define()', (_label, make) => {
    const fromDefine = definitionProblems(make());
    const error = catchError(
      () => make().build(),
      (e) => FsmDefinitionError.isInstance(e),
    );
    expect(error.problems).toEqual(fromDefine);
  });

  // Fails until fixed: fsm-builder.ts route() spreads `opts.inStates` ([...opts.inStates]) at call
  // time, so a non-iterable inStates throws a TypeError instead of becoming a definition problem.
  it('a route whose inStates is not an array is a definition problem, not a TypeError', () => {
    const problems = definitionProblems(
      FsmStrategy.builder()
        .initial('a')
        .route(busy, { inStates: 5 as never }),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/inStates/);
  });
});

describe('validation: what is not a problem', () => {
  it('two unguarded transitions for one (from, action) at different priorities are not ambiguous', () => {
    const fsm = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'go', 'low')
      .transition('a', 'go', 'high', { priority: 1 })
      .build();
    expect(fsm.execute('go').to).toBe('high');
  });

  it('a guarded and an unguarded transition for one (from, action) at one priority are not ambiguous', () => {
    const fsm = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'go', 'b', { guard: () => false })
      .transition('a', 'go', 'c')
      .build();
    expect(fsm.execute('go').to).toBe('c');
  });

  it('two guarded transitions for one (from, action) at one priority are not ambiguous', () => {
    expect(() =>
      FsmStrategy.builder()
        .initial('a')
        .transition('a', 'go', 'b', { guard: yes })
        .transition('a', 'go', 'c', { guard: yes })
        .define(),
    ).not.toThrow();
  });

  it('unguarded transitions with the same action from different states, or different actions from one state, are not ambiguous', () => {
    expect(() =>
      FsmStrategy.builder()
        .initial('a')
        .transition('a', 'go', 'b')
        .transition('b', 'go', 'a')
        .transition('a', 'stop', 'b')
        .define(),
    ).not.toThrow();
  });

  it('a transition into a final state, and a final initial state, are allowed', () => {
    const definition = FsmStrategy.builder()
      .state('only', { final: true, description: 'nothing to do' })
      .initial('only')
      .define();
    expect(definition.states).toEqual(['only']);
    expect(definition.create().validActions()).toEqual([]);
    expect(() =>
      FsmStrategy.builder()
        .state('a')
        .state('done', { final: true })
        .initial('a')
        .transition('a', 'end', 'done')
        .define(),
    ).not.toThrow();
  });

  it('a negative integer priority is allowed', () => {
    expect(() =>
      FsmStrategy.builder().initial('a').transition('a', 'go', 'b', { priority: -3 }).define(),
    ).not.toThrow();
  });

  it('state names, actions and guard names may be any non-empty strings', () => {
    const fsm = FsmStrategy.builder()
      .initial('état initial')
      .transition('état initial', 'go → on', 'the "end"', { guard: new ClosureGuard('guard with spaces', yes) })
      .build();
    expect(fsm.execute('go → on')).toEqual({
      from: 'état initial',
      action: 'go → on',
      to: 'the "end"',
      guard: 'guard with spaces',
    });
  });

  it('a route without options matches in every state and is no problem', () => {
    expect(FsmStrategy.builder().initial('a').route(busy).build().signalRoutes()).toHaveLength(1);
  });
});

describe('validation: every problem at once', () => {
  it('a definition with many problems reports all of them in one FsmDefinitionError', () => {
    const builder = FsmStrategy.builder()
      // no initial()
      .state('a')
      .state('done', { final: true })
      .state('a') // duplicate declaration
      .transition('a', 'go', 'ghost') // unknown to
      .transition('a', 'x', 'done')
      .transition('a', 'x', 'a') // ambiguous with the previous one
      .transition('done', 'again', 'a') // out of a final state
      .transition('a', 'y', 'done', { priority: 0.5 }) // non-integer priority
      .transition('a', '', 'done') // bad name
      .transition('a', 'z', 'done', { guard: { name: 'g' } as never }) // bad guard object
      .route(busy, { inStates: ['nowhere'] }) // unknown inStates
      .route(busy, { inStates: [] }) // empty inStates
      .route({ kind: 'nope', action: Action.Continue } as never); // malformed route
    const error = catchError(
      () => builder.build(),
      (e) => FsmDefinitionError.isInstance(e),
    );
    expect(error.code).toBe('FSM_DEFINITION_INVALID');
    const expected = [
      /initial/,
      /"a".*more than once/,
      /unknown state "ghost"/,
      /ambiguous/,
      /final state "done"/,
      /priority 0\.5/,
      /\baction "" must/,
      /guard "g".*evaluate/,
      /"nowhere"/,
      /inStates must be a non-empty array/,
      /kind "nope"/,
    ];
    expect(error.problems).toHaveLength(expected.length);
    for (const pattern of expected) expect(error.problems.filter((p) => pattern.test(p))).toHaveLength(1);
    for (const problem of error.problems) expect(error.message).toContain(problem);
  });

  it('problems of several transitions are each reported, naming the transition', () => {
    const problems = definitionProblems(
      FsmStrategy.builder()
        .initial('a')
        .transition('a', 'go', 'b', { priority: 0.1 })
        .transition('a', 'stop', 'b', { priority: 0.2 }),
    );
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain('go');
    expect(problems[1]).toContain('stop');
  });

  it('one transition naming two undeclared states reports both', () => {
    const problems = definitionProblems(FsmStrategy.builder().state('a').initial('a').transition('x', 'go', 'y'));
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toContain('"x"');
    expect(problems.join('\n')).toContain('"y"');
  });
});

describe('the state set', () => {
  it('without state() declarations, the states are every name used in initial and transition, in order of first use', () => {
    const definition = FsmStrategy.builder()
      .initial('idle')
      .transition('idle', 'start', 'running')
      .transition('running', 'review', 'revising')
      .transition('running', 'finish', 'done')
      .transition('revising', 'restart', 'running')
      .define();
    expect(definition.states).toEqual(['idle', 'running', 'revising', 'done']);
    expect(definition.initial).toBe('idle');
  });

  it('an initial state used by no transition is a state', () => {
    const definition = FsmStrategy.builder().initial('alone').define();
    expect(definition.states).toEqual(['alone']);
    expect(definition.create().currentState).toBe('alone');
  });

  it('with state() declarations, the states are exactly the declared ones, in declaration order, used or not', () => {
    const definition = FsmStrategy.builder()
      .state('z')
      .state('a')
      .state('unused')
      .initial('a')
      .transition('a', 'go', 'z')
      .define();
    expect(definition.states).toEqual(['z', 'a', 'unused']);
    expect(definition.initial).toBe('a');
  });

  it('the last initial() call wins', () => {
    const definition = FsmStrategy.builder().initial('a').transition('a', 'go', 'b').initial('b').define();
    expect(definition.initial).toBe('b');
    expect(definition.create().currentState).toBe('b');
  });

  it('definition.states is frozen', () => {
    const definition = FsmStrategy.builder().initial('a').define();
    expect(Object.isFrozen(definition.states)).toBe(true);
  });
});

describe('the builder', () => {
  it('every declaring method returns the builder itself, for chaining', () => {
    const builder = FsmStrategy.builder();
    expect(builder.initial('a')).toBe(builder);
    expect(builder.state('a')).toBe(builder);
    expect(builder.state('b', { final: true })).toBe(builder);
    expect(builder.transition('a', 'go', 'b')).toBe(builder);
    expect(builder.transition('a', 'go', 'b', { guard: yes, priority: 1 })).toBe(builder);
    expect(builder.route(busy)).toBe(builder);
    expect(builder.route(busy, { inStates: ['a'] })).toBe(builder);
  });

  it('new FsmStrategyBuilder() is the same as FsmStrategy.builder()', () => {
    const fsm = new FsmStrategyBuilder().initial('a').transition('a', 'go', 'b').build();
    expect(fsm.execute('go').to).toBe('b');
  });

  it('nothing is validated before build() or define()', () => {
    const builder = FsmStrategy.builder();
    expect(() =>
      builder
        .transition('', '', '', { priority: 0.5, guard: 1 as never })
        .state('')
        .route(null as never),
    ).not.toThrow();
  });

  it('a builder can be fixed after a failed define() and then defines successfully', () => {
    const builder = FsmStrategy.builder().transition('a', 'go', 'b');
    expect(() => builder.define()).toThrow(expect.objectContaining({ code: 'FSM_DEFINITION_INVALID' }));
    expect(builder.initial('a').define().states).toEqual(['a', 'b']);
  });

  it('the inStates array is copied when route() is called', () => {
    const inStates = ['a'];
    const builder = FsmStrategy.builder().initial('a').transition('a', 'go', 'b').route(busy, { inStates });
    inStates.push('ghost');
    expect(() => builder.define()).not.toThrow();
  });
});

describe('definitions', () => {
  it('define() returns an FsmDefinition that later builder calls do not change', () => {
    const builder = FsmStrategy.builder().initial('a').transition('a', 'go', 'b');
    const definition = builder.define();
    const mermaid = definition.toMermaid();
    builder.initial('b').transition('b', 'back', 'a').transition('a', 'go2', 'c').route(busy);

    expect(definition).toBeInstanceOf(FsmDefinition);
    expect(definition.states).toEqual(['a', 'b']);
    expect(definition.initial).toBe('a');
    expect(definition.toMermaid()).toBe(mermaid);
    const fsm = definition.create();
    expect(fsm.currentState).toBe('a');
    expect(fsm.validActions()).toEqual(['go']);
    expect(fsm.signalRoutes()).toEqual([]);
    fsm.execute('go');
    expect(fsm.canExecute('back')).toBe(false);
  });

  it('a definition is frozen', () => {
    const definition = FsmStrategy.builder().initial('a').define();
    expect(Object.isFrozen(definition)).toBe(true);
  });

  it('create() instances of one definition never share state', () => {
    const definition = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'go', 'b')
      .transition('b', 'go', 'c')
      .define();
    const one = definition.create();
    const two = definition.create();
    one.execute('go');
    expect(one.currentState).toBe('b');
    expect(two.currentState).toBe('a');
    two.execute('go');
    two.execute('go');
    expect(one.currentState).toBe('b');
    expect(two.currentState).toBe('c');
  });

  it('create(snapshot) restores the state of the snapshot', () => {
    const definition = FsmStrategy.builder().initial('a').transition('a', 'go', 'b').define();
    const source = definition.create();
    source.execute('go');
    const restored = definition.create(source.snapshot());
    expect(restored.currentState).toBe('b');
    expect(definition.create({ type: 'fsm', current_state: 'a' }).currentState).toBe('a');
  });

  it('new FsmDefinition() needs a builder', () => {
    const error = catchError(
      () => new FsmDefinition({} as never),
      (e) => FsmDefinitionError.isInstance(e),
    );
    expect(error.code).toBe('FSM_DEFINITION_INVALID');
    expect(new FsmDefinition(FsmStrategy.builder().initial('a')).states).toEqual(['a']);
  });

  it('one guard object may be shared between transitions and definitions', () => {
    const shared = new ClosureGuard('shared', (input) => input === 1);
    const one = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'go', 'b', { guard: shared })
      .transition('b', 'go', 'a', { guard: shared })
      .build();
    const two = FsmStrategy.builder().initial('x').transition('x', 'go', 'y', { guard: shared }).build();
    expect(one.execute('go', 1).guard).toBe('shared');
    expect(one.execute('go', 1).to).toBe('a');
    expect(two.execute('go', 1).to).toBe('y');
  });
});
