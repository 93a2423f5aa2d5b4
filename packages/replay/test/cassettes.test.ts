// Cassette files, store export edge cases (partial turns with their reasons), replay's and
// evaluate's options and failures.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryCheckpointStore } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { parseCrewConfig } from '@signalyard/crew';
import { definePipeline } from '@signalyard/pipeline';
import { createRunner, crewEngine, pipelineEngine } from 'signalyard';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ReplayError,
  cassetteFileName,
  evaluate,
  exportCassettes,
  loadCassettes,
  parseCassette,
  replay,
  sameRoute,
  saveCassettes,
  type Cassette,
  type ReplayRunnerParts,
} from '../src/index.js';
import { desk, deskTools, dm, liveModel, liveWeek, steppingClock, throwingTools } from './desk.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'replay-cas-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const today = (parts: ReplayRunnerParts) => desk({ ...parts, tools: parts.tools(throwingTools().tools) });

async function week(
  store = new MemoryCheckpointStore(),
): Promise<{ store: MemoryCheckpointStore; cassettes: Cassette[] }> {
  const runner = desk({ store, clock: steppingClock(), model: liveModel(), tools: deskTools().tools });
  await liveWeek(runner);
  await runner.close();
  return { store, cassettes: await exportCassettes(store, { clock: { now: () => Date.UTC(2026, 10, 28) } }) };
}

describe('cassette files', () => {
  it('save then load round-trips; file names keep distinct keys apart', async () => {
    const { cassettes } = await week();
    const dir = tempDir();
    const written = await saveCassettes(dir, cassettes);
    expect(written).toHaveLength(5);
    expect(await loadCassettes(dir)).toEqual(await loadCassettes(written));
    expect((await loadCassettes(dir)).map((c) => c.sessionKey).sort()).toEqual(
      cassettes.map((c) => c.sessionKey).sort(),
    );
    expect(cassettes[0]?.recordedAt).toBe('2026-11-28T00:00:00.000Z');
    expect(cassetteFileName('agent:a:b/c')).toBe('agent%3Aa%3Ab%2Fc.json');
    expect(cassetteFileName('a*')).not.toBe(cassetteFileName('a~'));
  });

  it('an invalid cassette: REPLAY_CASSETTE_INVALID listing every problem with its path', () => {
    const bad = {
      v: 2,
      sessionKey: '',
      agentId: 'a',
      recordedAt: 'yesterday',
      source: 'tape',
      turns: [{ signal: { kind: 'nope', payload: 1 } }],
      extra: 1,
    };
    try {
      parseCassette(bad, 'x.json');
      expect.unreachable();
    } catch (error) {
      expect(ReplayError.isInstance(error)).toBe(true);
      const e = error as ReplayError;
      expect(e.code).toBe('REPLAY_CASSETTE_INVALID');
      expect(e.file).toBe('x.json');
      for (const path of [
        'v:',
        'sessionKey:',
        'recordedAt:',
        'source:',
        'turns[0].signal.kind:',
        'turns[0].expected:',
        'extra: unknown key',
      ])
        expect(e.message).toContain(path);
    }
  });

  it('unreadable paths: REPLAY_CASSETTE_UNREADABLE (missing, not JSON, an empty folder, no paths)', async () => {
    const dir = tempDir();
    await expect(loadCassettes(join(dir, 'missing.json'))).rejects.toMatchObject({
      code: 'REPLAY_CASSETTE_UNREADABLE',
    });
    await expect(loadCassettes(dir)).rejects.toThrow(/holds no cassettes/);
    writeFileSync(join(dir, 'bad.json'), '{ not json');
    await expect(loadCassettes(dir)).rejects.toThrow(/is not JSON/);
    await expect(loadCassettes([])).rejects.toMatchObject({ code: 'REPLAY_CASSETTE_UNREADABLE' });
    writeFileSync(join(dir, 'bad.json'), '{}');
    await expect(loadCassettes(dir)).rejects.toMatchObject({ code: 'REPLAY_CASSETTE_INVALID' });
  });
});

describe('exportCassettes: what a store can and cannot rebuild', () => {
  it('prefix, sessions and since select; a store without turns gives no cassette', async () => {
    const { store } = await week();
    expect(await exportCassettes(new MemoryCheckpointStore())).toEqual([]);
    const one = await exportCassettes(store, { sessions: [(await week()).cassettes[1]!.sessionKey] });
    expect(one).toHaveLength(1);
    expect(await exportCassettes(store, { prefix: 'agent:sales:' })).toEqual([]);
    // Turns before `since` seed the replay: u1's second turn only, from the checkpoint after the first.
    const late = await exportCassettes(store, {
      since: '2026-11-20T09:00:01.500Z',
      sessions: [one[0]!.sessionKey.replace(/u2$/, 'u1')],
    });
    expect(late[0]?.turns).toHaveLength(1);
    expect(late[0]?.initial?.history).toHaveLength(2);
    expect((await replay(late, { runner: today })).sessions[0]?.status).toBe('same');
  });

  it('bad input: REPLAY_INPUT_INVALID naming it', async () => {
    await expect(exportCassettes({} as never)).rejects.toMatchObject({ code: 'REPLAY_INPUT_INVALID' });
    const store = new MemoryCheckpointStore();
    await expect(exportCassettes(store, { since: 'last week' })).rejects.toThrow(
      /since must be a Date or an ISO-8601 time, got "last week"/,
    );
    await expect(exportCassettes(store, { prefix: 3 as never })).rejects.toThrow(/prefix must be a string/);
    await expect(exportCassettes(store, { sessions: 'a' as never })).rejects.toThrow(/sessions must be a list/);
    await expect(exportCassettes(store, { redact: 1 as never })).rejects.toThrow(/redact must be a function/);
  });

  it('pruned versions: the oldest kept turn is partial (before_kept_versions), the cassette ends there and the replay stops at turn 1', async () => {
    const store = new MemoryCheckpointStore({ keepVersions: 1 });
    const runner = desk({ store, clock: steppingClock(), model: liveModel(), tools: deskTools().tools });
    for (const text of ['one', 'two', 'three']) await runner.handle(dm('u1', text));
    await runner.close();
    const [c] = await exportCassettes(store);
    expect(c?.turns.map((t) => t.partial?.reason)).toEqual(['before_kept_versions']);
    expect(c?.initial).toBeUndefined();
    const report = await replay([c!], { runner: today });
    expect(report.sessions[0]).toMatchObject({
      status: 'partial',
      partial: { turn: 1, reason: 'before_kept_versions' },
    });
    expect(report.sessions[0]?.turns).toEqual([]);
    expect([report.same, report.partial]).toEqual([0, 1]);
    // `since` after the oldest kept version: that version seeds the replay, and what follows replays.
    const versions = [];
    for await (const v of store.history(c!.sessionKey)) versions.push(v);
    const oldest = versions.at(-1)!;
    const since = new Date(Date.parse((oldest.data as { cause: { at: string } }).cause.at) + 1);
    const [late] = await exportCassettes(store, { since });
    expect(late?.turns.map((t) => t.partial?.reason)).toEqual([undefined]);
    expect(late?.initial).toBeDefined();
    expect((await replay([late!], { runner: today })).sessions[0]?.status).toBe('same');
  });

  it('a partial turn later in a cassette: the turns before it replay, the session stops there, partial', async () => {
    const { cassettes } = await week();
    const u1 = cassettes.find((c) => c.sessionKey.endsWith(':u1'))!;
    expect(u1.turns.length).toBeGreaterThanOrEqual(2);
    const cut = { ...u1, turns: [u1.turns[0]!, { ...u1.turns[1]!, partial: { reason: 'payload_missing' as const } }] };
    const report = await replay([cut], { runner: today });
    expect(report.sessions[0]).toMatchObject({ status: 'partial', partial: { turn: 2, reason: 'payload_missing' } });
    expect(report.sessions[0]?.turns.map((t) => [t.turn, t.actual?.status])).toEqual([[1, 'completed']]);
    // A partial FIRST turn with replayable turns after it: nothing is replayed, never `same`.
    const first = {
      ...u1,
      turns: [{ ...u1.turns[0]!, partial: { reason: 'history_trimmed' as const } }, u1.turns[1]!],
    };
    const built: unknown[] = [];
    const stopped = await replay([first], {
      runner: (p) => {
        built.push(p);
        return today(p);
      },
    });
    expect(stopped.sessions[0]).toMatchObject({ status: 'partial', partial: { turn: 1, reason: 'history_trimmed' } });
    expect(stopped.sessions[0]?.turns).toEqual([]);
    expect(built).toEqual([]);
    expect([stopped.same, stopped.partial]).toEqual([0, 1]);
  });

  it('a trimmed history (maxHistoryMessages cut into the turn) is history_trimmed; a missing payload is payload_missing', async () => {
    const store = new MemoryCheckpointStore();
    const model = scriptedModel((req) => `ok: ${req.messages.at(-1)?.content ?? ''}`);
    const trimmed = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(parseCrewConfig('entry_point: a\nagents:\n  - id: a\n'), { model }) }],
      store,
      maxHistoryMessages: 2,
    });
    // Two messages kept: each turn's user message and reply survive, what came before is dropped.
    await trimmed.handle(dm('t1', 'hi'));
    await trimmed.handle(dm('t1', 'again'));
    await trimmed.close();
    const tight = createRunner({
      agents: [{ id: 'desk', engine: crewEngine(parseCrewConfig('entry_point: a\nagents:\n  - id: a\n'), { model }) }],
      store,
      maxHistoryMessages: 1,
    });
    // One message kept: a turn's own user message is cut.
    await tight.handle(dm('t0', 'hi'));
    await tight.close();
    const capped = createRunner({ agents: [{ id: 'desk', engine: async () => ({}) }], store, maxCausePayloadBytes: 0 });
    await capped.handle(dm('t2', 'hello'));
    await capped.close();
    const cassettes = await exportCassettes(store);
    expect(cassettes.map((c) => [c.sessionKey.split(':').at(-1), c.turns.map((t) => t.partial?.reason)])).toEqual([
      ['t0', ['history_trimmed']],
      ['t1', [undefined, undefined]],
      ['t2', ['payload_missing']],
    ]);
    const factory = (max: number) => (p: ReplayRunnerParts) =>
      createRunner({
        agents: [
          {
            id: 'desk',
            engine: crewEngine(parseCrewConfig('entry_point: a\nagents:\n  - id: a\n'), { model: p.model }),
          },
        ],
        store: p.store,
        maxHistoryMessages: max,
      });
    expect((await replay([cassettes[1]!], { runner: factory(2) })).sessions[0]?.status).toBe('same');
    const report = await replay([cassettes[0]!, cassettes[2]!], { runner: factory(1) });
    expect(report.sessions.map((s) => [s.status, s.partial])).toEqual([
      ['partial', { turn: 1, reason: 'history_trimmed' }],
      ['partial', { turn: 1, reason: 'payload_missing' }],
    ]);
    expect(report.partial).toBe(2);
  });

  it('a parallel group or a pipeline turn is partial with its reason', async () => {
    const store = new MemoryCheckpointStore();
    const crew = parseCrewConfig(`
entry_point: lead
agents: [{ id: lead }, { id: law }, { id: tax }, { id: summary }]
routing:
  signals: { lead: [{ signal: "[ASK]", target: experts }], summary: [{ signal: "[DONE]", target: "" }] }
  parallel_groups: { experts: { agents: [law, tax], next_agent: summary } }
`);
    const model = scriptedModel({ lead: ['[ASK]'], law: ['Legal.'], tax: ['Taxed.'], summary: ['Both. [DONE]'] });
    const review = definePipeline({ name: 'review', stages: [{ name: 'plan', run: () => ({ ok: true }) }] });
    const runner = createRunner({
      agents: [
        { id: 'desk', engine: crewEngine(crew, { model }) },
        { id: 'review', engine: pipelineEngine(review) },
      ],
      store,
    });
    await runner.handle(dm('g1', 'ask them'));
    await runner.dispatch('agent:review:main', { kind: 'user_message', payload: 'review it' }, { agentId: 'review' });
    await runner.close();
    const reasons = (await exportCassettes(store)).map((c) => c.turns.map((t) => t.partial?.reason));
    expect(reasons).toEqual([['parallel_members'], ['pipeline_stage_calls']]);
  });
});

describe('replay and evaluate: options and failures', () => {
  it('bad options: REPLAY_INPUT_INVALID; a cassette that is not one: REPLAY_CASSETTE_INVALID', async () => {
    await expect(replay('x' as never, { runner: today })).rejects.toMatchObject({ code: 'REPLAY_INPUT_INVALID' });
    await expect(replay([], {} as never)).rejects.toThrow(/needs options \{ runner/);
    await expect(replay([], { runner: today, live: 'refund' as never })).rejects.toThrow(
      /live must be a list of tool names/,
    );
    await expect(replay([{ v: 1 } as never], { runner: today })).rejects.toMatchObject({
      code: 'REPLAY_CASSETTE_INVALID',
    });
    expect(await replay([], { runner: today })).toEqual({ sessions: [], same: 0, diverged: 0, failed: 0, partial: 0 });
  });

  it('a factory that throws or returns no runner fails its session (REPLAY_RUNNER_INVALID), not the replay', async () => {
    const { cassettes } = await week();
    const thrown = await replay(cassettes.slice(0, 1), {
      runner: () => {
        throw new Error('no config');
      },
    });
    expect(thrown.sessions[0]).toMatchObject({
      status: 'failed',
      error: { code: 'REPLAY_RUNNER_INVALID', message: 'The runner factory threw: no config' },
    });
    const nothing = await replay(cassettes.slice(0, 1), { runner: () => ({}) as never });
    expect(nothing.sessions[0]?.error?.message).toMatch(/expected a Runner \{ dispatch, close \}/);
    expect(nothing.failed).toBe(1);
  });

  it('evaluate: per-scorer means, failing sessions, passed against the threshold', async () => {
    const { cassettes } = await week();
    const result = await evaluate(cassettes, {
      runner: today,
      scorers: [sameRoute(), (run) => ({ name: 'short', score: run.cassette.turns.length > 1 ? 0 : 1 })],
      threshold: 0.5,
    });
    expect(result.means).toEqual([
      { name: 'sameRoute', mean: 1 },
      { name: 'short', mean: 0.4 },
    ]);
    expect(result.failing.map((s) => s.sessionKey.split(':').at(-1))).toEqual(['u1', 'u3', 'u4']);
    expect(result.passed).toBe(false);
    expect(result.report.same).toBe(5);
    const ok = await evaluate(cassettes, { runner: today, scorers: [sameRoute()] });
    expect(ok).toMatchObject({ passed: true, threshold: 1, failing: [] });
  });

  it('evaluate: bad scorers and thresholds are REPLAY_INPUT_INVALID naming them', async () => {
    const { cassettes } = await week();
    await expect(evaluate(cassettes, { runner: today, scorers: [] })).rejects.toThrow(/non-empty list of functions/);
    await expect(evaluate(cassettes, { runner: today, scorers: [sameRoute()], threshold: 2 })).rejects.toThrow(
      /threshold must be a number in \[0, 1\], got 2/,
    );
    await expect(evaluate(cassettes, { runner: today, scorers: [() => ({ name: 'x', score: 7 })] })).rejects.toThrow(
      /Scorer 0 returned/,
    );
    await expect(
      evaluate(cassettes, {
        runner: today,
        scorers: [
          () => {
            throw new Error('judge down');
          },
        ],
      }),
    ).rejects.toThrow(/judge down/);
  });
});

describe('a turn recorded as failed', () => {
  it('failing again the same way is same: the model call the store could not keep is no divergence', async () => {
    const store = new MemoryCheckpointStore();
    let fail = true;
    const model = scriptedModel(() => {
      if (fail) throw new Error('provider down');
      return 'ok';
    });
    const crew = parseCrewConfig('entry_point: a\nagents:\n  - id: a\n');
    const live = createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model }) }], store });
    expect((await live.handle(dm('f1', 'hi'))).status).toBe('failed');
    fail = false;
    expect((await live.handle(dm('f1', 'again'))).status).toBe('completed');
    await live.close();
    const cassettes = await exportCassettes(store);
    expect(cassettes[0]?.turns.map((t) => [t.expected.status, t.modelCalls.length])).toEqual([
      ['failed', 0],
      ['completed', 1],
    ]);
    const report = await replay(cassettes, {
      runner: (p) =>
        createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model: p.model }) }], store: p.store }),
    });
    expect(report.sessions[0]).toMatchObject({ status: 'same', divergences: [] });
  });
});
