import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { TransitionResult } from '@signalyard/core';
import {
  ClosureGuard,
  FsmDefinitionError,
  FsmStrategy,
  GuardFailedError,
  GuardRejectedError,
  InvalidTransitionError,
  type FsmDefinition,
  type GuardCondition,
} from '@signalyard/fsm';

// ---------------------------------------------------------------------------------------------
// Random machines. Guards are pure functions of a numeric input, described as data so that the
// reference below evaluates the description and never calls the FSM's guard functions.
// ---------------------------------------------------------------------------------------------

type GuardSpec =
  /** `input % k === r`, throwing first when `throwMod` divides the input. */
  | {
      readonly kind: 'mod';
      readonly k: number;
      readonly r: number;
      readonly throwMod: number | null;
      readonly as: 'function' | 'closure' | 'object';
    }
  /** Returns 1 when `input % k === r`, else 0: truthy is never enough. */
  | { readonly kind: 'truthy'; readonly k: number; readonly r: number; readonly as: 'function' | 'closure' | 'object' }
  /** Returns a Promise: always a guard failure. */
  | { readonly kind: 'promise'; readonly as: 'function' | 'closure' | 'object' };

interface TransitionSpec {
  readonly from: string;
  readonly action: string;
  readonly to: string;
  readonly priority: number;
  readonly guard: GuardSpec | null;
}

interface MachineSpec {
  readonly states: readonly string[];
  readonly declare: boolean;
  readonly transitions: readonly TransitionSpec[];
}

interface Step {
  readonly action: string;
  readonly input: number;
}

const STATES = ['s0', 's1', 's2', 's3', 's4'] as const;
const ACTIONS = ['a', 'b', 'c', 'B', 'é'] as const;

const guardSpec: fc.Arbitrary<GuardSpec> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('mod' as const),
      k: fc.integer({ min: 1, max: 4 }),
      r: fc.integer({ min: 0, max: 3 }),
      throwMod: fc.option(fc.integer({ min: 2, max: 7 }), { freq: 3 }),
      as: fc.constantFrom('function' as const, 'closure' as const, 'object' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('truthy' as const),
      k: fc.integer({ min: 1, max: 3 }),
      r: fc.integer({ min: 0, max: 2 }),
      as: fc.constantFrom('function' as const, 'closure' as const, 'object' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('promise' as const),
      as: fc.constantFrom('function' as const, 'closure' as const, 'object' as const),
    }),
  },
);

function transitionSpec(stateCount: number): fc.Arbitrary<TransitionSpec> {
  const state = fc.constantFrom(...STATES.slice(0, stateCount));
  return fc.record({
    from: state,
    action: fc.constantFrom(...ACTIONS),
    to: state,
    priority: fc.integer({ min: -2, max: 2 }),
    guard: fc.option(guardSpec, { freq: 3 }),
  });
}

/** Any machine, possibly with ambiguous unguarded duplicates. */
const anyMachine: fc.Arbitrary<MachineSpec> = fc.integer({ min: 1, max: STATES.length }).chain((n) =>
  fc.record({
    states: fc.constant(STATES.slice(0, n)),
    declare: fc.boolean(),
    transitions: fc.array(transitionSpec(n), { maxLength: 14 }),
  }),
);

const unguardedKey = (t: TransitionSpec): string => JSON.stringify([t.from, t.action, t.priority]);

/** A machine that passes validation: of ambiguous unguarded duplicates, only the first is kept. */
const validMachine: fc.Arbitrary<MachineSpec> = anyMachine.map((m) => {
  const seen = new Set<string>();
  const transitions = m.transitions.filter((t) => {
    if (t.guard !== null) return true;
    const key = unguardedKey(t);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { ...m, transitions };
});

/** Steps mostly use the machine's actions, sometimes an action no state has. */
const steps: fc.Arbitrary<readonly Step[]> = fc.array(
  fc.record({ action: fc.constantFrom(...ACTIONS, 'zz'), input: fc.integer({ min: 0, max: 40 }) }),
  { maxLength: 25 },
);

// ---------------------------------------------------------------------------------------------
// The system under test, built from a spec.
// ---------------------------------------------------------------------------------------------

function guardName(spec: GuardSpec, index: number): string {
  return spec.as === 'function' ? `guard#${index}` : `g${index}_${spec.kind}`;
}

function guardFunction(spec: GuardSpec): (input: unknown) => boolean {
  switch (spec.kind) {
    case 'mod':
      return (input) => {
        const n = input as number;
        if (spec.throwMod !== null && n % spec.throwMod === 0) throw new Error(`guard threw on ${n}`);
        return n % spec.k === spec.r;
      };
    case 'truthy':
      return (input) => ((input as number) % spec.k === spec.r ? 1 : 0) as unknown as boolean;
    case 'promise':
      return () => Promise.resolve(true) as unknown as boolean;
  }
}

function makeGuard(spec: GuardSpec, index: number): GuardCondition | ((input: unknown) => boolean) {
  const fn = guardFunction(spec);
  if (spec.as === 'function') return fn;
  if (spec.as === 'closure') return new ClosureGuard(guardName(spec, index), fn);
  return { name: guardName(spec, index), evaluate: fn };
}

function define(m: MachineSpec): FsmDefinition {
  const builder = FsmStrategy.builder();
  if (m.declare) for (const s of m.states) builder.state(s);
  builder.initial('s0');
  m.transitions.forEach((t, index) => {
    builder.transition(t.from, t.action, t.to, {
      priority: t.priority,
      ...(t.guard === null ? {} : { guard: makeGuard(t.guard, index) }),
    });
  });
  return builder.define();
}

// ---------------------------------------------------------------------------------------------
// The reference: fsm.md's semantics, brute force, over the spec.
// ---------------------------------------------------------------------------------------------

type Outcome =
  | { readonly kind: 'ok'; readonly result: TransitionResult }
  | { readonly kind: 'invalid'; readonly validActions: readonly string[] }
  | { readonly kind: 'rejected'; readonly guards: readonly string[] }
  | { readonly kind: 'failed'; readonly guard: string };

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function referenceValidActions(m: MachineSpec, state: string): string[] {
  return [...new Set(m.transitions.filter((t) => t.from === state).map((t) => t.action))].sort(byCodeUnit);
}

/** What the guard described by `spec` does on `input`: 'true', 'not-true', or 'fail' (throws / Promise). */
function referenceGuard(spec: GuardSpec, input: number): 'true' | 'not-true' | 'fail' {
  switch (spec.kind) {
    case 'mod':
      if (spec.throwMod !== null && input % spec.throwMod === 0) return 'fail';
      return input % spec.k === spec.r ? 'true' : 'not-true';
    case 'truthy':
      return 'not-true';
    case 'promise':
      return 'fail';
  }
}

function reference(m: MachineSpec, state: string, action: string, input: number): Outcome {
  const ok = (to: string, guard: string | undefined): Outcome => ({
    kind: 'ok',
    result: guard === undefined ? { from: state, action, to } : { from: state, action, to, guard },
  });
  const entries = m.transitions
    .map((t, index) => ({ t, index }))
    .filter(({ t }) => t.from === state && t.action === action);
  if (entries.length === 0) return { kind: 'invalid', validActions: referenceValidActions(m, state) };
  // Descending priority; ties: registration order (explicitly, not relying on sort stability).
  entries.sort((x, y) => y.t.priority - x.t.priority || x.index - y.index);
  const tried: string[] = [];
  for (const { t, index } of entries) {
    if (t.guard === null) return ok(t.to, undefined);
    const name = guardName(t.guard, index);
    tried.push(name);
    const verdict = referenceGuard(t.guard, input);
    if (verdict === 'fail') return { kind: 'failed', guard: name };
    if (verdict === 'true') return ok(t.to, name);
  }
  return { kind: 'rejected', guards: tried };
}

/** The states the definition has: declared, or every name used by initial/transitions in order of first use. */
function referenceStates(m: MachineSpec): string[] {
  if (m.declare) return [...m.states];
  const states: string[] = ['s0'];
  for (const t of m.transitions) {
    if (!states.includes(t.from)) states.push(t.from);
    if (!states.includes(t.to)) states.push(t.to);
  }
  return states;
}

/** Runs `execute` and classifies what happened, in the reference's terms. */
function observe(fsm: FsmStrategy, action: string, input: number): Outcome {
  try {
    return { kind: 'ok', result: { ...fsm.execute(action, input) } };
  } catch (error) {
    if (InvalidTransitionError.isInstance(error)) return { kind: 'invalid', validActions: [...error.validActions] };
    if (GuardRejectedError.isInstance(error)) return { kind: 'rejected', guards: [...error.guards] };
    if (GuardFailedError.isInstance(error)) return { kind: 'failed', guard: error.guard };
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------

describe('random machines and action sequences', () => {
  it('execute agrees with a brute-force reference of the transition table', () => {
    fc.assert(
      fc.property(validMachine, steps, (m, seq) => {
        const fsm = define(m).create();
        let state = 's0';
        for (const { action, input } of seq) {
          const expected = reference(m, state, action, input);
          expect(observe(fsm, action, input)).toStrictEqual(expected);
          if (expected.kind === 'ok') state = expected.result.to;
          expect(fsm.currentState).toBe(state);
          expect(fsm.validActions()).toEqual(referenceValidActions(m, state));
        }
      }),
    );
  });

  it('a failed execute never changes currentState', () => {
    fc.assert(
      fc.property(validMachine, steps, (m, seq) => {
        const fsm = define(m).create();
        for (const { action, input } of seq) {
          const before = fsm.currentState;
          const outcome = observe(fsm, action, input);
          if (outcome.kind !== 'ok') {
            expect(fsm.currentState).toBe(before);
            expect(fsm.snapshot()).toStrictEqual({ type: 'fsm', current_state: before });
          }
        }
      }),
    );
  });

  it('canExecute agrees with whether execute succeeds, and never changes the state', () => {
    fc.assert(
      fc.property(validMachine, steps, (m, seq) => {
        const fsm = define(m).create();
        for (const { action, input } of seq) {
          const before = fsm.currentState;
          const can = fsm.canExecute(action, input);
          expect(fsm.currentState).toBe(before);
          expect(fsm.canExecute(action, input)).toBe(can);
          const outcome = observe(fsm, action, input);
          expect(can).toBe(outcome.kind === 'ok');
        }
      }),
    );
  });

  it('define().create(instance.snapshot()) reproduces currentState, also through JSON', () => {
    fc.assert(
      fc.property(validMachine, steps, (m, seq) => {
        const fsm = define(m).create();
        for (const { action, input } of seq) {
          observe(fsm, action, input);
          const snapshot = fsm.snapshot();
          expect(define(m).create(snapshot).currentState).toBe(fsm.currentState);
          const viaJson = define(m).create(JSON.parse(JSON.stringify(snapshot)) as typeof snapshot);
          expect(viaJson.currentState).toBe(fsm.currentState);
          expect(viaJson.validActions()).toEqual(fsm.validActions());
        }
      }),
    );
  });

  it('instances of one definition never affect each other', () => {
    fc.assert(
      fc.property(validMachine, steps, steps, (m, first, second) => {
        const def = define(m);
        const a = def.create();
        const b = def.create();
        const aloneB = def.create();
        for (let i = 0; i < Math.max(first.length, second.length); i++) {
          const x = first[i];
          const y = second[i];
          if (x !== undefined) observe(a, x.action, x.input);
          if (y !== undefined) {
            observe(b, y.action, y.input);
            observe(aloneB, y.action, y.input);
          }
        }
        expect(b.currentState).toBe(aloneB.currentState);
      }),
    );
  });

  it('the state set is the declared states, or every name used in order of first use', () => {
    fc.assert(
      fc.property(validMachine, (m) => {
        expect(define(m).states).toEqual(referenceStates(m));
      }),
    );
  });

  it('define() rejects a machine exactly when two unguarded transitions share (from, action, priority)', () => {
    fc.assert(
      fc.property(anyMachine, (m) => {
        const keys = m.transitions.filter((t) => t.guard === null).map(unguardedKey);
        const ambiguous = new Set(keys).size !== keys.length;
        let error: unknown;
        try {
          define(m);
        } catch (e) {
          error = e;
        }
        expect(error === undefined ? 'valid' : FsmDefinitionError.isInstance(error) ? 'invalid' : 'other').toBe(
          ambiguous ? 'invalid' : 'valid',
        );
        if (FsmDefinitionError.isInstance(error)) {
          for (const problem of error.problems) expect(problem).toMatch(/ambiguous/);
        }
      }),
    );
  });

  it('the Mermaid diagram has the header, the initial arrow and one line per transition, in registration order', () => {
    fc.assert(
      fc.property(validMachine, (m) => {
        const lines = define(m).toMermaid().split('\n');
        const expected = [
          'stateDiagram-v2',
          '    [*] --> s0',
          ...m.transitions.map(
            (t, i) => `    ${t.from} --> ${t.to} : ${t.action}${t.guard === null ? '' : ` [${guardName(t.guard, i)}]`}`,
          ),
        ];
        expect(lines).toEqual(expected);
      }),
    );
  });
});
