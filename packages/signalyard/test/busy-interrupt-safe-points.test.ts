// whenBusy: 'interrupt' stops a turn at its next safe point, never inside a tool call
// (decisions-wave3 §11): what the interrupted turn completed — a tool's call and its result — is
// saved with the merged batch, so the merged turn's model sees the tool already ran. Sequenced
// with explicit deferreds: no sleeps.
import { describe, expect, it } from 'vitest';
import { SignalKind, signal, type ChatModel, type ChatRequest, type ChatResponse, type Tool } from '@signalyard/core';
import type { CrewConfigInput } from '@signalyard/crew';
import { createRunner, crewEngine } from 'signalyard';
import { deferred } from './support.js';

const KEY = 'agent:desk:main';
const crew: CrewConfigInput = {
  entryPoint: 'clerk',
  agents: [{ id: 'clerk', tools: ['refund'] }],
  routing: { signals: { clerk: [{ signal: '[DONE]', target: '' }] } },
};

/**
 * A model that answers every unanswered user message: each `refund <n>` with no tool result
 * after it gets a refund call; once none is left, it says it is done.
 */
function answeringModel(): ChatModel & { readonly requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    requests,
    generate(request: ChatRequest): Promise<ChatResponse> {
      requests.push(request);
      const { messages } = request;
      const calls = messages.flatMap((m, i) => {
        const asked = m.role === 'user' ? /^refund (\d+)$/.exec(m.content) : null;
        if (asked === null || messages.slice(i + 1).some((later) => later.role === 'tool')) return [];
        return [{ id: `call-${i}`, name: 'refund', arguments: { amount: Number(asked[1]) } }];
      });
      return Promise.resolve(calls.length > 0 ? { content: '', toolCalls: calls } : { content: 'All done. [DONE]' });
    },
  };
}

describe("whenBusy: 'interrupt' at safe points", () => {
  it('a message arriving while an allowed tool call is in flight (after its side effect, before its result): one side effect, and the merged history holds the result', async () => {
    const effects: number[] = [];
    const sideEffectDone = deferred();
    const release = deferred<string>();
    const toolAborts: AbortSignal[] = [];
    const refund: Tool = {
      name: 'refund',
      parameters: { type: 'object' },
      execute: async (args, ctx) => {
        effects.push((args as { amount: number }).amount);
        toolAborts.push(ctx.abortSignal as AbortSignal);
        sideEffectDone.resolve();
        return release.promise;
      },
    };
    const model = answeringModel();
    const runner = createRunner({
      agents: [{ id: 'desk', whenBusy: 'interrupt', engine: crewEngine(crew, { model, tools: [refund] }) }],
    });
    const first = runner.dispatch(KEY, signal(SignalKind.UserMessage, 'refund 50'));
    await sideEffectDone.promise;
    const second = runner.dispatch(KEY, signal(SignalKind.UserMessage, 'thanks'));
    // The interrupt does not cut the tool call off.
    expect(toolAborts[0]?.aborted).toBe(false);
    release.resolve('refunded 50');
    expect(await first).toMatchObject({ status: 'stopped' });
    expect(await second).toMatchObject({ status: 'completed' });
    expect(effects).toEqual([50]); // before: [50, 50]
    const history = (await runner.session(KEY))?.history ?? [];
    expect(history.map((m) => [m.role, m.content])).toEqual([
      ['user', 'refund 50'],
      ['assistant', ''],
      ['tool', 'refunded 50'],
      ['user', 'thanks'],
      ['assistant', 'All done. [DONE]'],
    ]);
    // The merged turn's model saw the tool's result before the new message.
    const seen = model.requests.at(-1)?.messages.map((m) => m.role);
    expect(seen?.slice(-4)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(model.requests).toHaveLength(2); // the interrupted turn made no model call after the tool
    await runner.close();
  });

  it('a force_stop still aborts the tool call in flight', async () => {
    const sideEffectDone = deferred();
    const toolAborts: AbortSignal[] = [];
    const refund: Tool = {
      name: 'refund',
      parameters: { type: 'object' },
      execute: (_args, ctx) => {
        toolAborts.push(ctx.abortSignal as AbortSignal);
        sideEffectDone.resolve();
        return new Promise(() => undefined); // never answers by itself
      },
    };
    const runner = createRunner({
      agents: [
        {
          id: 'desk',
          whenBusy: 'interrupt',
          routes: [{ kind: SignalKind.Stop, action: { type: 'force_stop' } }],
          engine: crewEngine(crew, { model: answeringModel(), tools: [refund] }),
        },
      ],
    });
    const first = runner.dispatch(KEY, signal(SignalKind.UserMessage, 'refund 7'));
    await sideEffectDone.promise;
    await runner.dispatch(KEY, signal(SignalKind.Stop));
    expect(toolAborts[0]?.aborted).toBe(true);
    expect((await first).status).toBe('stopped');
    await runner.close();
  });
});
