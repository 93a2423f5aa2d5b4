// ctx.idempotencyKey(name) and a crew's ToolContext.idempotencyKey under a Runner without an
// inbox (guarantee 3 of inbox.md): `<receiptId>:<name>` with a fresh UUID per signal, kept while
// the signal is applied again after a conflict; tool calls `<receiptId>:tool:<n>`.
import { MemoryCheckpointStore, SignalKind, signal, type ChatResponse, type Tool } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import type { CrewConfigInput } from '@signalyard/crew';
import { RunnerError, createRunner, crewEngine, type TurnContext } from 'signalyard';
import { describe, expect, it } from 'vitest';
import { MAIN, wrapStore } from './support.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
const say = (text: string) => signal(SignalKind.UserMessage, text);

describe('ctx.idempotencyKey', () => {
  it('is `<receiptId>:<name>`, one receipt id per signal, a UUID without an inbox', async () => {
    const keys: string[] = [];
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: (ctx) => {
            const { idempotencyKey } = ctx; // works detached
            keys.push(idempotencyKey('charge'), ctx.idempotencyKey('email'));
            return Promise.resolve({});
          },
        },
      ],
    });
    await runner.dispatch(MAIN, say('one'));
    await runner.dispatch(MAIN, say('two'));
    expect(keys[0]).toMatch(new RegExp(`^${UUID}:charge$`));
    const receipt = (key: string | undefined): string => (key ?? '').split(':')[0] ?? '';
    expect(keys[1]).toBe(`${receipt(keys[0])}:email`);
    expect(keys[2]).toMatch(new RegExp(`^${UUID}:charge$`));
    expect(receipt(keys[2])).not.toBe(receipt(keys[0]));
    await runner.close();
  });

  it('keeps its receipt id when the signal is applied again after a conflict', async () => {
    const inner = new MemoryCheckpointStore();
    let raced = false;
    const store = wrapStore(inner, {
      save: async (key, data, expectedVersion, next) => {
        if (!raced) {
          raced = true;
          await inner.save(key, data, expectedVersion); // another writer wins this version
        }
        return next();
      },
    });
    const seen: string[] = [];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: (ctx) => {
            seen.push(ctx.idempotencyKey('charge'));
            return Promise.resolve({ messages: [{ role: 'assistant', content: 'ok' }] });
          },
        },
      ],
    });
    const outcome = await runner.dispatch(MAIN, say('pay'));
    expect(outcome.status).toBe('completed');
    expect(seen).toHaveLength(2); // applied twice: the first save lost
    expect(seen[1]).toBe(seen[0]);
    await runner.close();
  });

  it.each([[''], [undefined], [3]])('throws RUNNER_INPUT_INVALID for the name %j (the turn fails)', async (bad) => {
    let thrown: unknown;
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: (ctx: TurnContext) => {
            try {
              ctx.idempotencyKey(bad as string);
            } catch (error) {
              thrown = error;
              throw error;
            }
            return Promise.resolve({});
          },
        },
      ],
    });
    const outcome = await runner.dispatch(MAIN, say('x'));
    expect(outcome.status).toBe('failed');
    expect(thrown).toBeInstanceOf(RunnerError);
    expect(thrown).toMatchObject({ code: 'RUNNER_INPUT_INVALID' });
    expect((thrown as Error).message).toContain('ctx.idempotencyKey needs a name');
    await runner.close();
  });
});

const crew: CrewConfigInput = {
  entryPoint: 'clerk',
  agents: [{ id: 'clerk', tools: ['refund', 'lookup'] }],
  routing: { signals: { clerk: [{ signal: '[DONE]', target: '' }] } },
  approvals: {
    rules: [{ tool: 'refund', when: [{ path: 'amount', gt: 100 }], decision: 'ask', reason: 'large refund' }],
  },
};

const reply = (content: string, ...calls: [string, string, unknown][]): ChatResponse => ({
  content,
  toolCalls: calls.map(([id, name, args]) => ({ id, name, arguments: args })),
});

describe('crewEngine: ToolContext.idempotencyKey', () => {
  it('is `<receiptId>:tool:<n>` in the order calls start; an approved call keeps the asking turn’s key', async () => {
    const keys: string[] = [];
    const turnKeys: string[] = [];
    const tool = (name: string): Tool => ({
      name,
      parameters: { type: 'object' },
      execute: (_args, ctx) => {
        keys.push(`${name}@${ctx.idempotencyKey ?? '-'}`);
        return Promise.resolve(`${name} ok`);
      },
    });
    const model = scriptedModel({
      clerk: [
        reply('Checking.', ['a', 'lookup', { order: 1 }], ['b', 'lookup', { order: 2 }]),
        reply('Refunding.', ['c', 'refund', { amount: 250 }]),
        reply('Checking again.', ['d', 'lookup', { order: 3 }]),
        'Done. [DONE]',
      ],
    });
    const engine = crewEngine(crew, { model, tools: [tool('refund'), tool('lookup')] });
    const runner = createRunner({
      agents: [
        {
          id: 'desk',
          engine: {
            ...engine,
            turn: (ctx) => {
              turnKeys.push(ctx.idempotencyKey('tool'));
              return engine.turn(ctx);
            },
          },
        },
      ],
    });
    const key = 'agent:desk:main';
    const asked = await runner.dispatch(key, say('refund order 1'));
    expect(asked.status).toBe('paused');
    const [asking] = turnKeys;
    expect(asking).toMatch(new RegExp(`^${UUID}:tool$`));
    expect(keys).toEqual([`lookup@${asking}:0`, `lookup@${asking}:1`]);
    expect(asked.pendingApprovals?.[0]?.idempotencyKey).toBe(`${asking}:2`);
    const [pending] = asked.pendingApprovals ?? [];
    const view = await runner.session(key);
    expect(view?.pendingApprovals[0]?.idempotencyKey).toBe(`${asking}:2`);

    const done = await runner.approve(key, [{ id: pending?.id ?? '', approved: true }]);
    expect(done.status).toBe('completed');
    const approving = turnKeys[1];
    expect(approving).not.toBe(asking);
    expect(keys.slice(2)).toEqual([`refund@${asking}:2`, `lookup@${approving}:0`]);
    await runner.close();
  });
});
