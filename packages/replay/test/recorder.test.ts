// Recorded on purpose: cassetteRecorder writes the exact model requests (hashed), responses and
// tool results of every turn; replays of them are `same`, a prompt edit is `prompt_changed`, and
// a parallel group and non-user signals (an approval, an FSM escalation) replay too.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryCheckpointStore, type Plugin } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { definePipeline } from '@signalyard/pipeline';
import { createRunner, crewEngine, pipelineEngine } from 'signalyard';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplayError, cassetteRecorder, loadCassettes, replay, type ReplayRunnerParts } from '../src/index.js';
import { desk, deskTools, dm, liveModel, liveWeek, steppingClock, throwingTools, type DeskChanges } from './desk.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'replay-rec-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const today =
  (changes: DeskChanges = {}, tools = throwingTools()) =>
  (parts: ReplayRunnerParts) =>
    desk({ ...parts, tools: parts.tools(tools.tools) }, changes);

/** A week recorded with the plugin and both wrappers, or (`alone`) with the plugin alone. */
async function recordWeek(dir: string, redact?: (v: string) => string, alone = false) {
  const recorder = cassetteRecorder({ dir, ...(redact !== undefined && { redact }) });
  const runner = desk({
    store: alone ? new MemoryCheckpointStore() : recorder.store(new MemoryCheckpointStore()),
    clock: steppingClock(),
    model: alone ? liveModel() : recorder.model(liveModel()),
    tools: deskTools().tools,
    plugins: [recorder],
  });
  await liveWeek(runner);
  await runner.close();
  await recorder.flush();
  return loadCassettes(dir);
}

describe('cassetteRecorder', () => {
  it('writes one cassette per session with hashed requests; replayed, every session is same and no tool runs', async () => {
    const cassettes = await recordWeek(tempDir());
    expect(cassettes).toHaveLength(5);
    const u2 = cassettes.find((c) => c.sessionKey.endsWith(':u2'))!;
    expect(u2.source).toBe('recorder');
    expect(u2.turns[0]?.modelCalls.map((m) => [m.agentId, m.request?.hash.length])).toEqual([
      ['triage', 64],
      ['billing', 64],
      ['billing', 64],
    ]);
    expect(u2.turns[0]?.toolResults).toEqual([
      { name: 'lookup_order', arguments: { order: 'A1' }, result: { order: 'A1', status: 'shipped' } },
      { name: 'refund', arguments: { amount: 40 }, result: 'refunded 40' },
    ]);
    const tools = throwingTools();
    const report = await replay(cassettes, { runner: today({}, tools) });
    expect(report.sessions.map((s) => [s.status, s.divergence?.text])).toEqual(Array(5).fill(['same', undefined]));
    expect(tools.calls).toEqual([]);
  });

  it('the plugin alone records the same cassettes (hashes from the engine events, summaries from the outcome)', async () => {
    const wrapped = await recordWeek(tempDir());
    const alone = await recordWeek(tempDir(), undefined, true);
    expect(alone.map((c) => c.sessionKey)).toEqual(wrapped.map((c) => c.sessionKey));
    // Same turns, same hashes: only `initial` (the store wrapper's extra) may differ, and no session existed before.
    expect(alone.map((c) => c.turns)).toEqual(wrapped.map((c) => c.turns));
    expect(alone.every((c) => c.turns.every((t) => t.modelCalls.every((m) => m.request?.hash.length === 64)))).toBe(
      true,
    );
    const tools = throwingTools();
    const report = await replay(alone, { runner: today({}, tools) });
    expect(report.sessions.map((s) => [s.status, s.divergence?.text])).toEqual(Array(5).fill(['same', undefined]));
    expect(tools.calls).toEqual([]);
    const edited = await replay(
      alone.filter((c) => c.sessionKey.endsWith(':u2')),
      { runner: today({ prompt: 'You triage, politely.' }) },
    );
    expect(edited.sessions[0]?.divergence).toMatchObject({ turn: 1, kind: 'prompt_changed' });
  });

  it('the plugin alone redacts before writing and hashing', async () => {
    const dir = tempDir();
    const recorder = cassetteRecorder({ dir, redact: (v) => v.replace(/\d{16}/g, '[card]') });
    const runner = desk({
      store: new MemoryCheckpointStore(),
      clock: steppingClock(),
      model: liveModel(),
      tools: deskTools().tools,
      plugins: [recorder],
    });
    await runner.handle(dm('u9', 'refund 40, card 4111111111111111'));
    await runner.close();
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    for (const f of files) expect(readFileSync(join(dir, f), 'utf8')).not.toContain('4111111111111111');
    const [cassette] = await loadCassettes(dir);
    expect(cassette?.turns[0]?.modelCalls[0]?.request?.hash).toHaveLength(64);
    expect((await replay([cassette!], { runner: today() })).sessions[0]?.status).toBe('same');
  });

  it('a prompt edited: prompt_changed at the first call of the agent, and the run goes on', async () => {
    const cassettes = await recordWeek(tempDir());
    const u2 = cassettes.find((c) => c.sessionKey.endsWith(':u2'))!;
    const report = await replay([u2], { runner: today({ prompt: 'You triage, politely.' }) });
    const s = report.sessions[0]!;
    expect(s.status).toBe('diverged');
    expect(s.divergence).toMatchObject({ turn: 1, kind: 'prompt_changed', path: 'modelCalls[0].request.hash' });
    // Answered in order all the same: the summary of the turn is the recorded one.
    expect(s.turns[0]?.actual).toEqual(s.turns[0]?.expected);
  });

  it('a secret in a user message never reaches the cassette file with redact', async () => {
    const dir = tempDir();
    const recorder = cassetteRecorder({ dir, redact: (v) => v.replace(/\d{16}/g, '[card]') });
    const runner = desk({
      store: recorder.store(new MemoryCheckpointStore()),
      clock: steppingClock(),
      model: recorder.model(liveModel()),
      tools: deskTools().tools,
      plugins: [recorder],
    });
    await runner.handle(dm('u9', 'refund 40, card 4111111111111111'));
    await runner.close();
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), 'utf8')).not.toContain('4111111111111111');
    const [cassette] = await loadCassettes(dir);
    expect(JSON.stringify(cassette)).toContain('[card]');
    // Redacted consistently: the replay (on the redacted text) hashes its requests alike.
    expect((await replay([cassette!], { runner: today() })).sessions[0]?.status).toBe('same');
  });

  it('a parallel group replays from a recorder cassette (members answered per agent)', async () => {
    const crew = parseCrewConfig(`
entry_point: lead
agents:
  - id: lead
  - id: law
  - id: tax
  - id: summary
routing:
  signals:
    lead:
      - { signal: "[ASK]", target: experts }
    summary:
      - { signal: "[DONE]", target: "" }
  parallel_groups:
    experts: { agents: [law, tax], next_agent: summary }
`);
    const dir = tempDir();
    const recorder = cassetteRecorder({ dir });
    const live = scriptedModel({
      lead: ['[ASK]', '[ASK]'],
      law: ['Legal.', 'Still legal.'],
      tax: ['Deductible.', 'Still.'],
      summary: ['Both. [DONE]', 'Again. [DONE]'],
    });
    const build = (parts: {
      store: MemoryCheckpointStore | ReplayRunnerParts['store'];
      model: ReplayRunnerParts['model'];
      plugins?: Plugin[];
    }) =>
      createRunner({
        agents: [{ id: 'desk', engine: crewEngine(crew, { model: parts.model }) }],
        store: parts.store,
        ...(parts.plugins && { plugins: parts.plugins }),
      });
    const runner = build({
      store: recorder.store(new MemoryCheckpointStore()),
      model: recorder.model(live),
      plugins: [recorder],
    });
    await runner.handle(dm('p1', 'can I deduct it?'));
    await runner.handle(dm('p1', 'sure?'));
    await runner.close();
    const cassettes = await loadCassettes(dir);
    expect(cassettes[0]?.turns.map((t) => t.modelCalls.length)).toEqual([4, 4]);
    const report = await replay(cassettes, { runner: (parts) => build(parts) });
    expect(report.sessions[0]?.status).toBe('same');
  });

  it('a pipeline interrupt replays from a recorder cassette: the stage calls, the pause and the resumed turn', async () => {
    // `ask` drafts its question with the model and pauses on a clarification; the answer resumes
    // the run at `ask`, and `answer` asks the model again with the order the user named.
    const orders = (prompt = 'status of') =>
      definePipeline({
        name: 'orders',
        stages: [
          {
            name: 'ask',
            run: async (ctx) => {
              if (ctx.response !== undefined) return { order: ctx.response.text };
              const q = await ctx.model!.generate({ messages: [{ role: 'user', content: String(ctx.input) }] });
              return ctx.interrupt('clarification', { question: q.content });
            },
            defaultNext: 'answer',
          },
          {
            name: 'answer',
            run: async (ctx) => {
              const order = (ctx.outputs.ask as { order: string }).order;
              const r = await ctx.model!.generate({ messages: [{ role: 'user', content: `${prompt} ${order}` }] });
              return { reply: r.content };
            },
          },
        ],
      });
    const build = (
      parts: { store: ReplayRunnerParts['store']; model: ReplayRunnerParts['model']; plugins?: Plugin[] },
      prompt?: string,
    ) =>
      createRunner({
        agents: [{ id: 'orders', engine: pipelineEngine(orders(prompt), { model: parts.model }) }],
        store: parts.store,
        ...(parts.plugins && { plugins: parts.plugins }),
      });
    const dir = tempDir();
    const recorder = cassetteRecorder({ dir });
    const runner = build({
      store: recorder.store(new MemoryCheckpointStore()),
      model: recorder.model(scriptedModel(['Which order?', 'A7 has shipped.'])),
      plugins: [recorder],
    });
    expect((await runner.handle(dm('i1', 'where is my order?'))).status).toBe('paused');
    expect((await runner.handle(dm('i1', 'A7'))).status).toBe('completed');
    await runner.close();
    await recorder.flush();

    const cassettes = await loadCassettes(dir);
    expect(cassettes).toHaveLength(1);
    const turns = cassettes[0]!.turns;
    expect(turns.map((t) => [t.expected.status, t.modelCalls.length])).toEqual([
      ['paused', 1],
      ['completed', 1],
    ]);
    expect(turns[0]!.expected.reply).toContain('Which order?');
    expect(turns[1]!.modelCalls[0]).toMatchObject({ agentId: 'answer', response: { content: 'A7 has shipped.' } });
    const report = await replay(cassettes, { runner: (parts) => build(parts) });
    expect(report.sessions.map((s) => [s.status, s.divergence?.text])).toEqual([['same', undefined]]);

    // The second stage's prompt edited: the resumed turn's call says so, and the run goes on.
    const edited = await replay(cassettes, { runner: (parts) => build(parts, 'where is') });
    expect(edited.sessions[0]?.divergence).toMatchObject({ turn: 2, kind: 'prompt_changed' });
  });

  it('a merged turn (whenBusy collect) is recorded partial (payload_missing) with the plugin alone; the replay stops there', async () => {
    const dir = tempDir();
    const recorder = cassetteRecorder({ dir });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => undefined;
    const first = new Promise<void>((resolve) => {
      started = resolve;
    });
    let turns = 0;
    const engine = async (ctx: { signals: readonly { payload: unknown }[] }) => {
      const n = turns++;
      if (n === 0) {
        started();
        await gate;
      }
      const texts = ctx.signals.map((x) => (x.payload as { text: string }).text).join('+');
      return { output: texts, messages: [{ role: 'assistant' as const, content: `got ${texts}` }] };
    };
    const runner = createRunner({ agents: [{ id: 'desk', engine, whenBusy: 'collect' }], plugins: [recorder] });
    const a = runner.handle({ channel: 'web', text: 'a' });
    await first;
    const rest = [runner.handle({ channel: 'web', text: 'b' }), runner.handle({ channel: 'web', text: 'c' })];
    release();
    await Promise.all([a, ...rest]);
    await runner.close();
    const [cassette] = await loadCassettes(dir);
    expect(cassette?.turns.map((t) => [t.expected.reply, t.partial?.reason])).toEqual([
      ['got a', undefined],
      ['got b+c', 'payload_missing'],
    ]);
    turns = 1; // no gate in the replay
    const report = await replay([cassette!], {
      runner: (parts) => createRunner({ agents: [{ id: 'desk', engine }], store: parts.store, clock: parts.clock }),
    });
    expect(report.sessions[0]).toMatchObject({ status: 'partial', partial: { turn: 2, reason: 'payload_missing' } });
    expect(report.sessions[0]?.turns.map((t) => t.actual?.reply)).toEqual(['got a']);
  });

  it('starts without its store wrapper (nothing written for a run that saves nothing), and refuses bad options', async () => {
    const dir = tempDir();
    const recorder = cassetteRecorder({ dir });
    const runner = createRunner({ agents: [{ id: 'a', engine: async () => ({}) }], plugins: [recorder] });
    await runner.start();
    await runner.close();
    expect(readdirSync(dir)).toEqual([]);
    expect(() => cassetteRecorder({ dir: '' })).toThrow(ReplayError);
    expect(() => cassetteRecorder({ dir: 'x', redact: 'no' as never })).toThrow(/redact must be a function/);
    expect(() => cassetteRecorder(null as never)).toThrow(/needs options/);
  });
});
