import { actionProblem, compareCodeUnits, frozenJsonValue } from '@signalyard/core/internal';
import {
  describeValue,
  isSignalKind,
  type SignalRoute,
  type StrategySnapshot,
  type TransitionResult,
} from '@signalyard/core';
import { FsmDefinitionError } from './errors/fsm-definition-error.js';
import type { GuardCondition } from './guard.js';
import type { CandidateList, CompiledFsm, CompiledTransition, FsmSpec } from './internal.js';
import { renderMermaid } from './fsm-mermaid.js';

interface CheckedTransition {
  readonly index: number;
  readonly from: string;
  readonly action: string;
  readonly to: string;
  readonly guard: GuardCondition | undefined;
  readonly guardName: string | undefined;
  readonly priority: number;
}

const isName = (value: unknown): value is string => typeof value === 'string' && value !== '';

function toGuard(guard: unknown): GuardCondition | undefined | string {
  if (guard === undefined) return undefined;
  if (typeof guard === 'function') {
    const fn = guard as (input: unknown) => boolean;
    return { name: '', evaluate: fn };
  }
  if (typeof guard === 'object' && guard !== null) {
    const g = guard as { name?: unknown; evaluate?: unknown };
    if (!isName(g.name)) return `guard name ${describeValue(g.name)} must be a non-empty string`;
    if (typeof g.evaluate !== 'function') return `guard "${g.name}" must have an evaluate(input) function`;
    return guard as GuardCondition;
  }
  return `guard must be a GuardCondition or a function, got ${describeValue(guard)}`;
}

/**
 * Validates a builder's spec, reporting every problem at once, and compiles it into the indexed
 * form the hot path reads.
 * @throws FsmDefinitionError listing every problem.
 */
export function compileFsm(spec: FsmSpec): CompiledFsm {
  const problems: string[] = [];
  const declared = checkStates(spec, problems);
  // The initial state.
  let initial: string | undefined;
  if (spec.initial === undefined) problems.push('no initial state: call initial(state)');
  else if (!isName(spec.initial))
    problems.push(`initial state ${describeValue(spec.initial)} must be a non-empty string`);
  else initial = spec.initial;

  const transitions = checkTransitions(spec, problems);
  const states = stateSet(declared, initial, transitions, problems);
  checkTransitionRules(transitions, declared.finals, problems);
  const routes = checkRoutes(spec, new Set(states), problems);
  if (problems.length > 0 || initial === undefined) throw new FsmDefinitionError({ problems });
  return indexFsm(states, initial, transitions, routes, declared.finals);
}

/** The states declared with `state()` (problems pushed to `problems`). */
function checkStates(spec: FsmSpec, problems: string[]): { declared: boolean; names: string[]; finals: string[] } {
  const declared = spec.states.length > 0;
  const names: string[] = [];
  const finals: string[] = [];
  for (const [i, s] of spec.states.entries()) {
    if (!isName(s.name)) {
      problems.push(`state #${i}: name ${describeValue(s.name)} must be a non-empty string`);
      continue;
    }
    if (names.includes(s.name)) problems.push(`state "${s.name}" is declared more than once`);
    else names.push(s.name);
    if (s.final !== undefined && typeof s.final !== 'boolean')
      problems.push(`state "${s.name}": final must be a boolean, got ${describeValue(s.final)}`);
    if (s.description !== undefined && typeof s.description !== 'string') {
      problems.push(`state "${s.name}": description must be a string, got ${describeValue(s.description)}`);
    }
    if (s.final === true && !finals.includes(s.name)) finals.push(s.name);
  }

  return { declared, names, finals };
}

/** The transitions that are well-formed, with their guards (problems pushed to `problems`). */
function checkTransitions(spec: FsmSpec, problems: string[]): CheckedTransition[] {
  const transitions: CheckedTransition[] = [];
  for (const [index, t] of spec.transitions.entries()) {
    const label = `transition #${index} (${String(t.from)} --${String(t.action)}--> ${String(t.to)})`;
    let ok = true;
    for (const [field, value] of [
      ['from', t.from],
      ['action', t.action],
      ['to', t.to],
    ] as const) {
      if (!isName(value)) {
        problems.push(`${label}: ${field} ${describeValue(value)} must be a non-empty string`);
        ok = false;
      }
    }
    let priority = 0;
    if (t.priority !== undefined) {
      if (typeof t.priority !== 'number' || !Number.isInteger(t.priority)) {
        problems.push(`${label}: priority ${describeValue(t.priority)} must be an integer`);
        ok = false;
      } else priority = t.priority;
    }
    const guard = toGuard(t.guard);
    if (typeof guard === 'string') {
      problems.push(`${label}: ${guard}`);
      ok = false;
    }
    if (!ok || typeof guard === 'string') continue;
    const guardName = guard === undefined ? undefined : guard.name === '' ? `guard#${index}` : guard.name;
    transitions.push({
      index,
      from: t.from as string,
      action: t.action as string,
      to: t.to as string,
      guard,
      guardName,
      priority,
    });
  }

  return transitions;
}

/** The state set: as declared, or every name used by initial() and transition(). */
function stateSet(
  declared: { declared: boolean; names: string[] },
  initial: string | undefined,
  transitions: readonly CheckedTransition[],
  problems: string[],
): string[] {
  const states: string[] = declared.declared ? [...declared.names] : [];
  if (!declared.declared) {
    const use = (s: string | undefined): void => {
      if (s !== undefined && !states.includes(s)) states.push(s);
    };
    use(initial);
    for (const t of transitions) {
      use(t.from);
      use(t.to);
    }
  } else {
    if (initial !== undefined && !states.includes(initial))
      problems.push(`initial state "${initial}" is not a declared state`);
    for (const t of transitions) {
      for (const s of new Set([t.from, t.to])) {
        if (!states.includes(s))
          problems.push(`transition #${t.index} (${t.from} --${t.action}--> ${t.to}): unknown state "${s}"`);
      }
    }
  }

  return states;
}

/** No transition leaves a final state; no two unguarded transitions are ambiguous. */
function checkTransitionRules(
  transitions: readonly CheckedTransition[],
  finals: readonly string[],
  problems: string[],
): void {
  for (const t of transitions) {
    if (finals.includes(t.from))
      problems.push(`transition #${t.index} (${t.from} --${t.action}--> ${t.to}) leaves final state "${t.from}"`);
  }

  // Two unguarded transitions for one (from, action) at one priority: which one applies is ambiguous.
  for (let i = 0; i < transitions.length; i++) {
    const a = transitions[i] as CheckedTransition;
    if (a.guard !== undefined) continue;
    for (let j = i + 1; j < transitions.length; j++) {
      const b = transitions[j] as CheckedTransition;
      if (b.guard === undefined && b.from === a.from && b.action === a.action && b.priority === a.priority) {
        problems.push(
          `transitions #${a.index} and #${b.index} are ambiguous: both unguarded from "${a.from}" via "${a.action}" at priority ${a.priority} (to "${a.to}" and "${b.to}")`,
        );
      }
    }
  }
}

/** The strategy-tier routes (problems pushed to `problems`). */
function checkRoutes(spec: FsmSpec, known: ReadonlySet<string>, problems: string[]): CompiledRoute[] {
  const routes: CompiledRoute[] = [];
  for (const [i, r] of spec.routes.entries()) {
    const problem = routeProblem(r.route);
    if (problem !== undefined) {
      problems.push(`route #${i}: ${problem}`);
      continue;
    }
    if (r.inStates === undefined) {
      routes.push({ route: r.route as SignalRoute, inStates: undefined });
      continue;
    }
    if (!Array.isArray(r.inStates) || r.inStates.length === 0) {
      problems.push(`route #${i}: inStates must be a non-empty array of state names, got ${describeValue(r.inStates)}`);
      continue;
    }
    const unknown = (r.inStates as unknown[]).filter((s) => typeof s !== 'string' || !known.has(s));
    for (const s of unknown) problems.push(`route #${i}: inStates names unknown state ${describeValue(s)}`);
    if (unknown.length === 0) routes.push({ route: r.route as SignalRoute, inStates: new Set(r.inStates as string[]) });
  }

  return routes;
}

/** A checked strategy-tier route and the states it is limited to. */
interface CompiledRoute {
  route: SignalRoute;
  inStates: ReadonlySet<string> | undefined;
}

/** Indexes a checked definition: state → action → candidates in evaluation order (priority desc, then registration). */
function indexFsm(
  states: readonly string[],
  initial: string,
  transitions: readonly CheckedTransition[],
  routes: readonly CompiledRoute[],
  finals: readonly string[],
): CompiledFsm {
  const stateIndex = new Map(states.map((s, i) => [s, i]));
  const buckets = states.map(() => new Map<string, CheckedTransition[]>());
  for (const t of transitions) {
    const byAction = buckets[stateIndex.get(t.from) as number] as Map<string, CheckedTransition[]>;
    const list = byAction.get(t.action);
    if (list === undefined) byAction.set(t.action, [t]);
    else list.push(t);
  }
  const table = buckets.map((byAction) => {
    const compiled = new Map<string, CandidateList>();
    for (const [action, list] of byAction) {
      const ordered = [...list].sort((a, b) => b.priority - a.priority || a.index - b.index);
      const candidates: CompiledTransition[] = ordered.map((t) => {
        const result: TransitionResult = Object.freeze(
          t.guardName === undefined
            ? { from: t.from, action: t.action, to: t.to }
            : { from: t.from, action: t.action, to: t.to, guard: t.guardName },
        );
        const taken = Object.freeze({ ok: true as const, result });
        return { to: stateIndex.get(t.to) as number, guard: t.guard, guardName: t.guardName, result, taken };
      });
      compiled.set(action, {
        transitions: Object.freeze(candidates),
        guardNames: Object.freeze(candidates.flatMap((c) => (c.guardName === undefined ? [] : [c.guardName]))),
      });
    }
    return compiled;
  });
  const validActions = table.map((byAction) => Object.freeze([...byAction.keys()].sort(compareCodeUnits)));
  // Frozen and marked as frozen JSON: a store shares a snapshot instead of copying it with every save.
  const snapshots: StrategySnapshot[] = states.map((s) => frozenJsonValue({ type: 'fsm', current_state: s }));

  return {
    states: Object.freeze(states),
    stateIndex,
    initial: stateIndex.get(initial) as number,
    table,
    validActions,
    snapshots,
    routes,
    finals: Object.freeze([...finals]),
    mermaid: renderMermaid({
      states,
      initial,
      transitions: transitions.map((t) => ({ from: t.from, to: t.to, action: t.action, guardName: t.guardName })),
      finals,
    }),
  };
}

function routeProblem(route: unknown): string | undefined {
  if (typeof route !== 'object' || route === null) return `expected a SignalRoute object, got ${describeValue(route)}`;
  const r = route as Record<string, unknown>;
  if (!isSignalKind(r.kind)) return `kind ${describeValue(r.kind)} is not a signal kind`;
  if (r.predicate !== undefined && typeof r.predicate !== 'function')
    return `predicate must be a function, got ${describeValue(r.predicate)}`;
  const action = actionProblem(r.action);
  if (action !== undefined) return `action: ${action}`;
  if (r.priority !== undefined && (typeof r.priority !== 'number' || !Number.isInteger(r.priority))) {
    return `priority ${describeValue(r.priority)} must be an integer`;
  }
  if (r.name !== undefined && typeof r.name !== 'string') return `name must be a string, got ${describeValue(r.name)}`;
  return undefined;
}
