import { describe, expect, it } from 'vitest';
import type { StrategySnapshot } from '@signalyard/core';
import { FsmSnapshotError, FsmStrategy, type FsmDefinition } from '@signalyard/fsm';
import { catchError } from './support.js';

function definition(): FsmDefinition {
  return FsmStrategy.builder()
    .initial('idle')
    .transition('idle', 'start', 'running')
    .transition('running', 'finish', 'done')
    .define();
}

describe('snapshot()', () => {
  it('a fresh instance snapshots as exactly { type: "fsm", current_state: "idle" }', () => {
    const snapshot = definition().create().snapshot();
    expect(snapshot).toStrictEqual({ type: 'fsm', current_state: 'idle' });
    expect(JSON.stringify(snapshot)).toBe('{"type":"fsm","current_state":"idle"}');
  });

  it('the snapshot names the current state after transitions, and has no other fields', () => {
    const fsm = definition().create();
    fsm.execute('start');
    expect(JSON.stringify(fsm.snapshot())).toBe('{"type":"fsm","current_state":"running"}');
    fsm.execute('finish');
    expect(fsm.snapshot()).toStrictEqual({ type: 'fsm', current_state: 'done' });
    expect(Object.keys(fsm.snapshot())).toEqual(['type', 'current_state']);
  });

  it('a snapshot taken earlier is not changed by later transitions', () => {
    const fsm = definition().create();
    const before = fsm.snapshot();
    fsm.execute('start');
    expect(before).toStrictEqual({ type: 'fsm', current_state: 'idle' });
  });

  it('a state name with quotes and unicode survives a JSON round trip', () => {
    const def = FsmStrategy.builder().initial('a').transition('a', 'go', 'say "héllo"\n').define();
    const fsm = def.create();
    fsm.execute('go');
    const json = JSON.stringify(fsm.snapshot());
    expect(def.create(JSON.parse(json) as StrategySnapshot).currentState).toBe('say "héllo"\n');
  });
});

describe('restore()', () => {
  it('restores a snapshot taken from another instance of the definition', () => {
    const def = definition();
    const source = def.create();
    source.execute('start');
    const target = def.create();
    target.restore(source.snapshot());
    expect(target.currentState).toBe('running');
    expect(target.execute('finish')).toEqual({ from: 'running', action: 'finish', to: 'done' });
  });

  it('restores a snapshot that went through JSON', () => {
    const fsm = definition().create();
    fsm.restore(JSON.parse('{"type":"fsm","current_state":"done"}') as StrategySnapshot);
    expect(fsm.currentState).toBe('done');
    expect(fsm.validActions()).toEqual([]);
  });

  it('can move the state backwards, to the initial state', () => {
    const fsm = definition().create();
    fsm.execute('start');
    fsm.restore({ type: 'fsm', current_state: 'idle' });
    expect(fsm.currentState).toBe('idle');
    expect(fsm.canExecute('start')).toBe(true);
  });

  it('accepts a snapshot of another definition whose state exists here', () => {
    const other = FsmStrategy.builder().initial('running').define().create().snapshot();
    const fsm = definition().create();
    fsm.restore(other);
    expect(fsm.currentState).toBe('running');
  });

  const bad: readonly (readonly [string, unknown])[] = [
    ['a snapshot of another type', { type: 'direct' }],
    ['a snapshot of another type naming a known state', { type: 'graph', current_state: 'idle' }],
    ['a snapshot without a type', { current_state: 'idle' }],
    ['an unknown state', { type: 'fsm', current_state: 'nowhere' }],
    ['an empty state name', { type: 'fsm', current_state: '' }],
    ['a missing current_state', { type: 'fsm' }],
    ['a non-string current_state', { type: 'fsm', current_state: 1 }],
    ['a current_state naming an Object.prototype member', { type: 'fsm', current_state: 'constructor' }],
    ['null', null],
    ['undefined', undefined],
    ['a string', '{"type":"fsm","current_state":"idle"}'],
    ['a number', 0],
    ['an array', ['fsm', 'idle']],
  ];

  it.each(bad)('rejects %s with FsmSnapshotError and leaves the state unchanged', (_label, snapshot) => {
    const fsm = definition().create();
    fsm.execute('start');
    const error = catchError(
      () => fsm.restore(snapshot as never),
      (e) => FsmSnapshotError.isInstance(e),
    );
    expect(error.code).toBe('FSM_SNAPSHOT_INVALID');
    expect(fsm.currentState).toBe('running');
    expect(fsm.snapshot()).toStrictEqual({ type: 'fsm', current_state: 'running' });
  });

  it.each(bad)('create() from %s throws FsmSnapshotError', (_label, snapshot) => {
    // `undefined` means "no snapshot" to create(): the fresh instance is the right answer there.
    if (snapshot === undefined) {
      expect(definition().create(snapshot as never).currentState).toBe('idle');
      return;
    }
    const error = catchError(
      () => definition().create(snapshot as never),
      (e) => FsmSnapshotError.isInstance(e),
    );
    expect(error.code).toBe('FSM_SNAPSHOT_INVALID');
  });

  it('the error message names the unknown state', () => {
    const error = catchError(
      () => definition().create({ type: 'fsm', current_state: 'nowhere' }),
      (e) => FsmSnapshotError.isInstance(e),
    );
    expect(error.message).toContain('nowhere');
  });

  it('the error message names the foreign type', () => {
    const error = catchError(
      () => definition().create({ type: 'direct' }),
      (e) => FsmSnapshotError.isInstance(e),
    );
    expect(error.message).toContain('direct');
  });
});
