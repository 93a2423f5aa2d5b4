import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore, signal, type ChatMessage } from '@signalyard/core';
import { createRunner, type SessionCheckpointV1, type TurnContext } from 'signalyard';

const KEY = 'agent:main:main';
const echo = (ctx: TurnContext): Promise<{ messages: ChatMessage[] }> =>
  Promise.resolve({ messages: [{ role: 'assistant', content: `echo ${String(ctx.signal.payload)}` }] });

describe('the Runner on a MemoryCheckpointStore (its save taken at once)', () => {
  it("goes through a subclass's own save, once per saved signal", async () => {
    const saved: number[] = [];
    class Counting extends MemoryCheckpointStore {
      override save(key: string, data: unknown, expectedVersion: number): Promise<number> {
        saved.push(expectedVersion);
        return super.save(key, data, expectedVersion);
      }
    }
    const store = new Counting();
    const runner = createRunner({ agents: [{ id: 'main', engine: echo }], store });
    for (const text of ['a', 'b', 'c'])
      expect((await runner.dispatch(KEY, signal('user_message', text))).status).toBe('completed');
    expect(saved).toEqual([0, 1, 2]);
    await runner.close();
  });

  it('saves every signal, and a conflict with another runner on the same store is applied again', async () => {
    const store = new MemoryCheckpointStore();
    const a = createRunner({ agents: [{ id: 'main', engine: echo }], store });
    const b = createRunner({ agents: [{ id: 'main', engine: echo }], store });
    expect((await a.dispatch(KEY, signal('user_message', 'one'))).status).toBe('completed');
    expect((await b.dispatch(KEY, signal('user_message', 'two'))).status).toBe('completed');
    // a's loaded state is at version 1, the store at 2: a's save conflicts, a reloads and applies again.
    expect((await a.dispatch(KEY, signal('user_message', 'three'))).status).toBe('completed');
    const stored = await store.load(KEY);
    expect(stored?.version).toBe(3);
    expect((stored?.data as SessionCheckpointV1).history.map((m) => m.content)).toEqual([
      'one',
      'echo one',
      'two',
      'echo two',
      'three',
      'echo three',
    ]);
    expect((await a.session(KEY))?.version).toBe(3);
    await a.close();
    await b.close();
  });
});
