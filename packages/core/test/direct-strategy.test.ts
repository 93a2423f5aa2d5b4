import { describe, expect, it } from 'vitest';
import { DirectStrategy } from '@signalyard/core';
import type { StrategySnapshot } from '@signalyard/core';
import { throwsCode } from './helpers.js';

describe('DirectStrategy', () => {
  it('execute returns { from: "direct", action, to: "direct" }', () => {
    const strategy = new DirectStrategy();
    expect(strategy.execute('check')).toEqual({ from: 'direct', action: 'check', to: 'direct' });
    expect(strategy.execute('check out ✓', { any: 'input' })).toEqual({
      from: 'direct',
      action: 'check out ✓',
      to: 'direct',
    });
  });

  it('execute reports no guard', () => {
    expect(new DirectStrategy().execute('check').guard).toBeUndefined();
  });

  it('allows any action any number of times, in any order', () => {
    const strategy = new DirectStrategy();
    for (const action of ['finish', 'start', 'finish', 'finish']) {
      expect(strategy.canExecute(action)).toBe(true);
      expect(strategy.execute(action).to).toBe('direct');
    }
  });

  it('canExecute is true for every non-empty string, whatever the input', () => {
    const strategy = new DirectStrategy();
    for (const action of ['a', ' ', 'transition', 'custom:stop'])
      expect(strategy.canExecute(action, { x: 1 })).toBe(true);
  });

  it.each([
    ['the empty string', ''],
    ['a number', 1],
    ['null', null],
    ['undefined', undefined],
    ['an object', { action: 'check' }],
  ])('canExecute is false for %s', (_title, action) => {
    expect(new DirectStrategy().canExecute(action as string)).toBe(false);
  });

  it('execute("") throws ACTION_INVALID naming the value', () => {
    const error = throwsCode(() => new DirectStrategy().execute(''), 'ACTION_INVALID');
    expect(error.message).toContain('""');
  });

  it.each<[string, unknown, string]>([
    ['a number', 7, '7'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
  ])('execute throws ACTION_INVALID for %s', (_title, action, shown) => {
    const error = throwsCode(() => new DirectStrategy().execute(action as string), 'ACTION_INVALID');
    expect(error.message).toContain(shown);
  });

  it('canExecute and execute make the same decision', () => {
    const strategy = new DirectStrategy();
    for (const action of ['ok', '', 0, null] as unknown as string[]) {
      let executed: boolean;
      try {
        strategy.execute(action);
        executed = true;
      } catch {
        executed = false;
      }
      expect(strategy.canExecute(action)).toBe(executed);
    }
  });

  it('contributes no signal routes', () => {
    expect(new DirectStrategy().signalRoutes()).toEqual([]);
  });

  it('snapshot is { type: "direct" } and JSON-safe', () => {
    const strategy = new DirectStrategy();
    expect(strategy.snapshot()).toEqual({ type: 'direct' });
    expect(JSON.parse(JSON.stringify(strategy.snapshot()))).toEqual({ type: 'direct' });
  });

  it('snapshot does not change when actions are executed', () => {
    const strategy = new DirectStrategy();
    strategy.execute('a');
    strategy.execute('b');
    expect(strategy.snapshot()).toEqual({ type: 'direct' });
  });

  it('restore accepts { type: "direct" }, including its own snapshot after a JSON round trip', () => {
    const strategy = new DirectStrategy();
    expect(() => {
      strategy.restore({ type: 'direct' });
    }).not.toThrow();
    const saved = JSON.parse(JSON.stringify(new DirectStrategy().snapshot())) as StrategySnapshot;
    expect(() => {
      strategy.restore(saved);
    }).not.toThrow();
    expect(strategy.snapshot()).toEqual({ type: 'direct' });
  });

  it.each([
    ['an fsm snapshot', { type: 'fsm', state: 'idle' }, '"fsm"'],
    ['a snapshot without a type', {}, '{}'],
    ['a differently cased type', { type: 'Direct' }, '"Direct"'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['the string "direct"', 'direct', '"direct"'],
  ])('restore throws STRATEGY_SNAPSHOT_INVALID for %s, naming it', (_title, snapshot, shown) => {
    const strategy = new DirectStrategy();
    const error = throwsCode(() => {
      strategy.restore(snapshot as unknown as StrategySnapshot);
    }, 'STRATEGY_SNAPSHOT_INVALID');
    expect(error.message).toContain(shown);
    expect(strategy.snapshot()).toEqual({ type: 'direct' });
  });
});
