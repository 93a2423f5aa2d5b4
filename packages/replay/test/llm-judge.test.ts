// An LLM judge is a scorer that calls a model (replay.md Evals); with `judgeCassette` its calls
// are recorded the first time and served from the file after.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryCheckpointStore, type ChatModel, type RunSummary } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ReplayError,
  evaluate,
  exportCassettes,
  llmJudge,
  type Cassette,
  type ReplayRunnerParts,
  type ScorerRun,
} from '../src/index.js';
import { desk, deskTools, liveModel, liveWeek, steppingClock, throwingTools } from './desk.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'replay-judge-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const summary: RunSummary = { status: 'completed', handoffs: [], toolCalls: [], approvals: [], reply: 'Refunded 40.' };
const cassette: Cassette = {
  v: 1,
  sessionKey: 'agent:desk:dm:u1',
  agentId: 'desk',
  recordedAt: '2026-11-20T09:00:00.000Z',
  source: 'recorder',
  turns: [
    {
      signal: { kind: 'user_message', payload: { channel: 'web', text: 'refund 40' } },
      expected: summary,
      modelCalls: [],
      toolResults: [],
    },
  ],
};
const run: ScorerRun = { cassette, turns: [{ expected: summary, actual: summary }] };
const throwing: ChatModel = {
  generate: () => Promise.reject(new Error('no network in this test')),
};

describe('llmJudge', () => {
  it('asks the model with the criteria and each turn, and reads its JSON verdict', async () => {
    const model = scriptedModel(['Sure: ```json\n{"score": 0.75, "reason": "polite, amount stated"}\n```']);
    const score = await llmJudge({ model, criteria: 'The refund is confirmed.' })(run);
    expect(score).toEqual({ name: 'llmJudge', score: 0.75, reason: 'polite, amount stated' });
    const request = model.calls[0]!;
    expect(request.agentId).toBe('llmJudge');
    expect(request.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(request.messages[1]?.content).toContain('Criteria: The refund is confirmed.');
    expect(request.messages[1]?.content).toContain('"reply":"Refunded 40."');
    expect(request.messages[1]?.content).toContain('"text":"refund 40"');
  });

  it('judgeCassette: first run calls the model and writes the file; then served from it; changed criteria call again', async () => {
    const file = join(tempDir(), 'judges', 'judge.json');
    const first = scriptedModel(['{"score": 1, "reason": "confirmed"}']);
    expect(await llmJudge({ model: first, criteria: 'Confirmed.', judgeCassette: file })(run)).toEqual({
      name: 'llmJudge',
      score: 1,
      reason: 'confirmed',
    });
    expect(first.calls).toHaveLength(1);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { v: number; calls: Record<string, unknown> };
    expect(saved.v).toBe(1);
    expect(Object.values(saved.calls)).toEqual([{ response: { content: '{"score": 1, "reason": "confirmed"}' } }]);
    // Re-scoring: the model is never called (it would throw), the verdict is the recorded one.
    expect(await llmJudge({ model: throwing, criteria: 'Confirmed.', judgeCassette: file })(run)).toMatchObject({
      score: 1,
    });
    // Edited criteria: a new request, sent to the model and added to the file.
    const second = scriptedModel(['{"score": 0.5, "reason": "half"}']);
    expect(
      await llmJudge({ model: second, criteria: 'Confirmed, with the amount.', judgeCassette: file })(run),
    ).toMatchObject({ score: 0.5 });
    expect(second.calls).toHaveLength(1);
    const again = JSON.parse(readFileSync(file, 'utf8')) as { calls: Record<string, unknown> };
    expect(Object.keys(again.calls)).toHaveLength(2);
    await expect(
      llmJudge({ model: throwing, criteria: 'Something else.', judgeCassette: file })(run),
    ).rejects.toMatchObject({ code: 'REPLAY_JUDGE_FAILED', message: expect.stringContaining('no network') });
  });

  it('in evaluate, over a replayed week: recorded once, then re-scored from the file alone', async () => {
    const store = new MemoryCheckpointStore();
    const live = desk({ store, clock: steppingClock(), model: liveModel(), tools: deskTools().tools });
    await liveWeek(live);
    await live.close();
    const cassettes = await exportCassettes(store);
    const today = (parts: ReplayRunnerParts) => desk({ ...parts, tools: parts.tools(throwingTools().tools) });
    const file = join(tempDir(), 'judge.json');
    const model = scriptedModel(() => '{"score": 0.9, "reason": "fine"}');
    const judge = (m: ChatModel) => llmJudge({ model: m, criteria: 'Helpful.', judgeCassette: file, name: 'helpful' });
    const first = await evaluate(cassettes, { runner: today, scorers: [judge(model)], threshold: 0.8 });
    expect(first.means).toEqual([{ name: 'helpful', mean: 0.9 }]);
    expect(model.calls).toHaveLength(cassettes.length);
    const second = await evaluate(cassettes, { runner: today, scorers: [judge(throwing)], threshold: 0.8 });
    expect(second.means).toEqual(first.means);
    expect(second.passed).toBe(true);
  });

  it('an unreadable answer scores 0 with the reason; a model that throws is REPLAY_JUDGE_FAILED', async () => {
    const judge = (answer: string) => llmJudge({ model: scriptedModel([answer]), criteria: 'x' })(run);
    expect(await judge('I think it is good')).toMatchObject({
      score: 0,
      reason: expect.stringMatching(/^judge answer unreadable: no JSON object/),
    });
    expect(await judge('{"score": 1.5}')).toMatchObject({ score: 0, reason: expect.stringContaining('1.5') });
    expect(await judge('{"score": "0.25"}')).toEqual({ name: 'llmJudge', score: 0.25 });
    expect(await judge('{score: 1}')).toMatchObject({ score: 0, reason: expect.stringContaining('not JSON') });
    const failed: unknown = await Promise.resolve(llmJudge({ model: throwing, criteria: 'x' })(run)).catch(
      (e: unknown) => e,
    );
    expect(ReplayError.isInstance(failed) && failed.code).toBe('REPLAY_JUDGE_FAILED');
  });

  it('a prompt function instead of criteria; bad options and a bad judge cassette are typed errors', async () => {
    const model = scriptedModel(['{"score": 1}']);
    await llmJudge({ model, prompt: (r) => `Judge ${r.cassette.sessionKey}` })(run);
    expect(model.calls[0]?.messages[1]?.content).toBe('Judge agent:desk:dm:u1');
    expect(() => llmJudge({ model })).toThrow(/exactly one of criteria .* got neither/);
    expect(() => llmJudge({ model, criteria: 'a', prompt: () => 'b' })).toThrow(/got both/);
    expect(() => llmJudge({ model: {} as never, criteria: 'a' })).toThrow(/model must be a ChatModel/);
    expect(() => llmJudge({ model, criteria: ' ' })).toThrow(/criteria must be a non-empty string/);
    expect(() => llmJudge({ model, criteria: 'a', judgeCassette: '' })).toThrow(ReplayError);
    const file = join(tempDir(), 'bad.json');
    writeFileSync(file, '{"v": 2, "calls": {}}');
    await expect(llmJudge({ model, criteria: 'a', judgeCassette: file })(run)).rejects.toMatchObject({
      code: 'REPLAY_CASSETTE_INVALID',
    });
    writeFileSync(file, 'nope');
    await expect(llmJudge({ model, criteria: 'a', judgeCassette: file })(run)).rejects.toMatchObject({
      code: 'REPLAY_CASSETTE_UNREADABLE',
    });
  });
});
