import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Action, SignalKind, signal } from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { createRunner, type AgentDefinition } from 'signalyard';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-runner-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const ticket = FsmStrategy.builder()
  .initial('open')
  .transition('open', 'start', 'in_progress')
  .transition('in_progress', 'resolve', 'resolved')
  .route(
    { kind: SignalKind.custom('advance'), name: 'advance', action: Action.transition('start') },
    { inStates: ['open'] },
  )
  .route(
    { kind: SignalKind.custom('advance'), name: 'finish', action: Action.transition('resolve') },
    { inStates: ['in_progress'] },
  )
  .define();

const agent: AgentDefinition = {
  id: 'support',
  strategy: () => ticket.create(),
  engine: async (ctx) => ({
    messages: [{ role: 'assistant', content: `re: ${String((ctx.signal.payload as { text?: string }).text)}` }],
  }),
};

describe('a Runner on SqliteCheckpointStore', () => {
  it('a new runner on the same file continues every session: FSM state, history, version', async () => {
    const path = join(dir, 'runner.db');
    const first = new SqliteCheckpointStore({ path });
    const runner1 = createRunner({ agents: [agent], store: first });
    expect((await runner1.handle({ channel: 'cli', text: 'hello' })).status).toBe('completed');
    expect((await runner1.dispatch('agent:support:main', signal(SignalKind.custom('advance')))).status).toBe(
      'completed',
    );
    await runner1.close();
    await first.close();

    const second = new SqliteCheckpointStore({ path });
    const runner2 = createRunner({ agents: [agent], store: second });
    const before = await runner2.session('agent:support:main');
    expect(before?.strategy).toEqual({ type: 'fsm', current_state: 'in_progress' });
    expect(before?.history.map((m) => m.content)).toEqual(['hello', 're: hello']);
    expect(before?.version).toBe(2);
    const outcome = await runner2.dispatch('agent:support:main', signal(SignalKind.custom('advance')));
    expect(outcome.status).toBe('completed');
    expect(outcome.output).toMatchObject({ from: 'in_progress', to: 'resolved' });
    expect((await runner2.session('agent:support:main'))?.version).toBe(3);
    await runner2.close();
    await second.close();
  });

  it('two runners sharing one file never lose an update: a conflict is reloaded and re-applied', async () => {
    const path = join(dir, 'shared.db');
    const storeA = new SqliteCheckpointStore({ path });
    const storeB = new SqliteCheckpointStore({ path });
    const a = createRunner({ agents: [agent], store: storeA });
    const b = createRunner({ agents: [agent], store: storeB });
    const key = 'agent:support:main';
    // A caches the session at version 1; B saves version 2 behind its back; A's next save
    // conflicts, reloads, and re-applies its message on top of B's.
    await a.handle({ channel: 'cli', text: 'one' });
    await b.handle({ channel: 'cli', text: 'two' });
    await a.handle({ channel: 'cli', text: 'three' });
    const view = await a.session(key);
    expect(view?.history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['one', 'two', 'three']);
    expect(view?.version).toBe(3);
    await a.close();
    await b.close();
    await storeA.close();
    await storeB.close();
  });
});
