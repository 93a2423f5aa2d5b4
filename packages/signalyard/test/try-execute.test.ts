import { describe, expect, it } from 'vitest';
import {
  Action,
  SignalKind,
  SignalyardError,
  signal,
  transitionRefusal,
  type ExecutionStrategy,
  type StrategyRefusal,
  type StrategySnapshot,
  type TransitionAttempt,
  type TransitionResult,
} from '@signalyard/core';
import { createRunner, type AgentDefinition } from 'signalyard';
import { MAIN, echoEngine } from './support.js';

const GO = SignalKind.custom('go');

class NotNowError extends SignalyardError<'NOT_NOW'> {
  readonly [transitionRefusal] = true;
}

/** A strategy that refuses `go` every other time, and counts how it was asked. */
class Alternating implements ExecutionStrategy {
  calls = { execute: 0, tryExecute: 0 };
  #allow = true;
  constructor(private readonly offersTry: boolean) {
    if (!offersTry) this.tryExecute = undefined;
  }
  execute(action: string): TransitionResult {
    this.calls.execute++;
    const attempt = this.#decide(action);
    if (!attempt.ok) throw attempt.refusal.toError();
    return attempt.result;
  }
  tryExecute?: (action: string) => TransitionAttempt = (action) => {
    this.calls.tryExecute++;
    return this.#decide(action);
  };
  canExecute(): boolean {
    return this.#allow;
  }
  signalRoutes() {
    return [];
  }
  snapshot() {
    return { type: 'alternating', allow: this.#allow };
  }
  restore(snapshot: StrategySnapshot): void {
    this.#allow = snapshot.allow === true;
  }
  #decide(action: string): TransitionAttempt {
    if (!this.#allow) {
      this.#allow = true;
      const refusal: StrategyRefusal = {
        code: 'NOT_NOW',
        action,
        toError: () => new NotNowError({ code: 'NOT_NOW', message: `Not now: ${action}` }),
      };
      return { ok: false, refusal };
    }
    this.#allow = false;
    return { ok: true, result: { from: 'a', action, to: 'a' } };
  }
}

function agent(strategy: Alternating): AgentDefinition {
  return {
    id: 'main',
    strategy: () => strategy,
    routes: [{ kind: GO, action: Action.transition('go'), name: 'go' }],
    engine: echoEngine().engine,
  };
}

describe('Runner and ExecutionStrategy.tryExecute', () => {
  it('uses tryExecute when the strategy offers it: a refusal is a rejected outcome carrying its error', async () => {
    const strategy = new Alternating(true);
    const runner = createRunner({ agents: [agent(strategy)] });
    expect(await runner.dispatch(MAIN, signal(GO))).toMatchObject({
      status: 'completed',
      output: { from: 'a', action: 'go', to: 'a' },
    });
    const refused = await runner.dispatch(MAIN, signal(GO));
    expect(refused).toMatchObject({ status: 'rejected', action: Action.transition('go') });
    expect(refused.error).toBeInstanceOf(NotNowError);
    expect(refused.error?.message).toBe('Not now: go');
    expect(strategy.calls).toEqual({ execute: 0, tryExecute: 2 });
    await runner.close();
  });

  it('falls back to execute, whose refusal throws, when the strategy has no tryExecute: same outcomes', async () => {
    const strategy = new Alternating(false);
    const runner = createRunner({ agents: [agent(strategy)] });
    expect((await runner.dispatch(MAIN, signal(GO))).status).toBe('completed');
    const refused = await runner.dispatch(MAIN, signal(GO));
    expect(refused).toMatchObject({ status: 'rejected', error: { code: 'NOT_NOW', message: 'Not now: go' } });
    expect(strategy.calls).toEqual({ execute: 2, tryExecute: 0 });
    await runner.close();
  });
});
