import { describe, expect, it } from 'vitest';
import { Action, formatAction, isAction } from '@signalyard/core';
import { actionProblem } from '../src/internal/action-problem.js';
import { throwsCode } from './helpers.js';

describe('Action constants', () => {
  it('Continue, GracefulStop and ForceStop have their types', () => {
    expect(Action.Continue).toEqual({ type: 'continue' });
    expect(Action.GracefulStop).toEqual({ type: 'graceful_stop' });
    expect(Action.ForceStop).toEqual({ type: 'force_stop' });
  });

  it('the constants are frozen', () => {
    for (const action of [Action.Continue, Action.GracefulStop, Action.ForceStop]) {
      expect(Object.isFrozen(action)).toBe(true);
      expect(() => {
        (action as { type: string }).type = 'force_stop';
      }).toThrow(TypeError);
    }
    expect(Action.Continue.type).toBe('continue');
  });

  it('the Action namespace is frozen: a constant cannot be replaced', () => {
    expect(Object.isFrozen(Action)).toBe(true);
    expect(() => {
      (Action as { Continue: unknown }).Continue = { type: 'force_stop' };
    }).toThrow(TypeError);
    expect(Action.Continue).toEqual({ type: 'continue' });
  });
});

describe('Action factories', () => {
  it('transition(target) makes a frozen transition action', () => {
    const action = Action.transition('check');
    expect(action).toEqual({ type: 'transition', target: 'check' });
    expect(Object.isFrozen(action)).toBe(true);
  });

  it('custom(name) makes a frozen custom action', () => {
    const action = Action.custom('summarize');
    expect(action).toEqual({ type: 'custom', name: 'summarize' });
    expect(Object.isFrozen(action)).toBe(true);
  });

  it('reject(reason) makes a frozen reject action', () => {
    const action = Action.reject('busy');
    expect(action).toEqual({ type: 'reject', reason: 'busy' });
    expect(Object.isFrozen(action)).toBe(true);
  });

  it('a factory-made action cannot be changed after the fact', () => {
    const action = Action.transition('check');
    expect(() => {
      (action as { target: string }).target = 'finish';
    }).toThrow(TypeError);
    expect(action).toEqual({ type: 'transition', target: 'check' });
  });

  const factories = [
    ['transition', 'target', (v: unknown) => Action.transition(v as string)],
    ['custom', 'name', (v: unknown) => Action.custom(v as string)],
    ['reject', 'reason', (v: unknown) => Action.reject(v as string)],
  ] as const;

  const bad = [
    ['the empty string', '', '""'],
    ['a number', 42, '42'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['an object', { name: 'x' }, '{"name":"x"}'],
  ] as const;

  for (const [factory, field, make] of factories) {
    it.each(bad)(
      `${factory}() rejects %s with ACTION_INVALID naming the ${field} and the value`,
      (_title, value, shown) => {
        const error = throwsCode(() => make(value), 'ACTION_INVALID');
        expect(error.message).toContain(field);
        expect(error.message).toContain(shown);
      },
    );
  }
});

describe('actionProblem and isAction', () => {
  const wellFormed = [
    Action.Continue,
    Action.GracefulStop,
    Action.ForceStop,
    Action.transition('check'),
    Action.custom('summarize'),
    Action.reject('busy'),
    { type: 'transition', target: 'check' },
  ];

  it.each(wellFormed)('a well-formed action %j has no problem', (action) => {
    expect(actionProblem(action)).toBeUndefined();
    expect(isAction(action)).toBe(true);
  });

  it.each([
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['a type name string', 'continue', '"continue"'],
    ['a number', 1, '1'],
    ['an object without a type', {}, 'undefined'],
    ['an array', [], 'undefined'],
    ['an unknown type', { type: 'stop' }, '"stop"'],
    ['a differently cased type', { type: 'Continue' }, '"Continue"'],
    ['a non-string type', { type: 7 }, '7'],
    ['a transition without a target', { type: 'transition' }, 'target'],
    ['a transition with an empty target', { type: 'transition', target: '' }, 'target'],
    ['a transition with a non-string target', { type: 'transition', target: 5 }, 'target'],
    ['a transition with its target under another field', { type: 'transition', name: 'check' }, 'target'],
    ['a custom action without a name', { type: 'custom' }, 'name'],
    ['a custom action with an empty name', { type: 'custom', name: '' }, 'name'],
    ['a custom action with a non-string name', { type: 'custom', name: ['x'] }, 'name'],
    ['a reject without a reason', { type: 'reject' }, 'reason'],
    ['a reject with an empty reason', { type: 'reject', reason: '' }, 'reason'],
    ['a reject with a null reason', { type: 'reject', reason: null }, 'reason'],
  ])('%s is not an action, and the problem says why', (_title, value, mentioned) => {
    const problem = actionProblem(value);
    expect(problem).toBeTypeOf('string');
    expect(problem).toContain(mentioned);
    expect(isAction(value)).toBe(false);
  });

  it('an unknown type problem lists the valid types', () => {
    const problem = actionProblem({ type: 'pause' }) ?? '';
    for (const type of ['continue', 'graceful_stop', 'force_stop', 'transition', 'custom', 'reject']) {
      expect(problem).toContain(`"${type}"`);
    }
  });
});

describe('formatAction', () => {
  it.each([
    [Action.Continue, 'continue'],
    [Action.GracefulStop, 'graceful_stop'],
    [Action.ForceStop, 'force_stop'],
    [Action.transition('check'), 'transition(check)'],
    [Action.custom('summarize'), 'custom(summarize)'],
    [Action.reject('busy'), 'reject(busy)'],
  ])('renders %j as %s', (action, text) => {
    expect(formatAction(action)).toBe(text);
  });

  it('renders a missing action as "unrouted"', () => {
    expect(formatAction(undefined)).toBe('unrouted');
  });
});
