// Round trip (replay.md "Tests"): sessions run live on a store → exportCassettes → replay with the
// same configuration → every session `same`; planted changes each detected at the right turn and
// field; a replay never runs a tool; a secret never reaches a cassette with `redact`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointStore } from '@signalyard/core';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCassettes, replay, type Cassette, type ReplayRunnerParts } from '../src/index.js';
import { desk, deskTools, liveModel, liveWeek, steppingClock, throwingTools, type DeskChanges } from './desk.js';

let dir: string;
let store: CheckpointStore;
let cassettes: Cassette[];

const today =
  (changes: DeskChanges = {}, tools = throwingTools()) =>
  (parts: ReplayRunnerParts) =>
    desk({ ...parts, tools: parts.tools(tools.tools) }, changes);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'replay-rt-'));
  store = new SqliteCheckpointStore({ path: join(dir, 'desk.db') });
  const { tools } = deskTools();
  const runner = desk({ store, clock: steppingClock(), model: liveModel(), tools });
  await liveWeek(runner);
  await runner.close();
  cassettes = await exportCassettes(store);
});

afterAll(async () => {
  await store.close?.();
  rmSync(dir, { recursive: true, force: true });
});

const byUser = (user: string): Cassette => {
  const c = cassettes.find((x) => x.sessionKey.endsWith(`:${user}`));
  if (c === undefined) throw new Error(`no cassette for ${user}: ${cassettes.map((x) => x.sessionKey).join(', ')}`);
  return c;
};

describe('store → exportCassettes → replay (SQLite)', () => {
  it('exports one cassette per session, every turn complete, with the recorded model calls and tool results', () => {
    expect(cassettes.map((c) => c.sessionKey.split(':').at(-1))).toEqual(['u1', 'u2', 'u3', 'u4', 'u5']);
    for (const c of cassettes) {
      expect(c.source).toBe('store');
      expect(c.turns.every((t) => t.partial === undefined)).toBe(true);
    }
    const refund = byUser('u2').turns[0]!;
    expect(refund.expected.handoffs).toEqual([{ from: 'triage', to: 'billing', signal: '[TO_BILLING]' }]);
    expect(refund.modelCalls.map((m) => m.agentId)).toEqual(['triage', 'billing', 'billing']);
    expect(refund.toolResults).toEqual([
      { name: 'lookup_order', arguments: { order: 'A1' }, result: '{"order":"A1","status":"shipped"}' },
      { name: 'refund', arguments: { amount: 40 }, result: 'refunded 40' },
    ]);
    expect(byUser('u3').turns.map((t) => t.signal.kind)).toEqual(['user_message', 'tool_approval', 'user_message']);
    expect(byUser('u4').turns[1]?.expected).toMatchObject({ action: 'transition:escalate', fsmState: 'escalated' });
  });

  it('replayed with the same configuration, every session is same — and no tool runs', async () => {
    const tools = throwingTools();
    const report = await replay(cassettes, { runner: today({}, tools) });
    expect(report.sessions.map((s) => [s.sessionKey.split(':').at(-1), s.status, s.divergence?.text])).toEqual([
      ['u1', 'same', undefined],
      ['u2', 'same', undefined],
      ['u3', 'same', undefined],
      ['u4', 'same', undefined],
      ['u5', 'same', undefined],
    ]);
    expect(report).toMatchObject({ same: 5, diverged: 0, failed: 0, partial: 0 });
    expect(tools.calls).toEqual([]);
    const u2 = report.sessions[1]!;
    expect(u2.turns[0]?.actual).toEqual(u2.turns[0]?.expected);
  });

  it('a routing binding moved: the first web message goes to another agent (turn 1 › agentId)', async () => {
    const report = await replay([byUser('u1')], { runner: today({ webAgent: 'sales' }) });
    expect(report.sessions[0]?.status).toBe('diverged');
    expect(report.sessions[0]?.divergence).toMatchObject({
      turn: 1,
      path: 'agentId',
      expected: 'desk',
      actual: 'sales',
    });
    expect(report.sessions[0]?.divergence?.text).toBe('turn 1 › agentId: desk → sales');
  });

  it('a crew marker renamed: the handoff to billing is gone (turn 1 › handoffs[0])', async () => {
    const report = await replay([byUser('u2')], { runner: today({ marker: '[TO_PAYMENTS]' }) });
    const d = report.sessions[0]?.divergence;
    expect(d).toMatchObject({ turn: 1, kind: 'summary' });
    expect(d?.path.startsWith('handoffs[0]')).toBe(true);
  });

  it('an FSM guard flipped: the VIP escalation is refused now (turn 2 › status)', async () => {
    // A refused transition of a non-user signal saves nothing, so u5's refusal is no turn of its cassette.
    expect(byUser('u5').turns).toHaveLength(1);
    const vip = await replay([byUser('u4')], { runner: today({ guardFlipped: true }) });
    expect(vip.sessions[0]?.divergence).toMatchObject({
      turn: 2,
      path: 'status',
      expected: 'completed',
      actual: 'rejected',
    });
  });

  it('an approval threshold changed: the refund of 40 now asks (turn 1 › approvals[1].decision)', async () => {
    const report = await replay([byUser('u2')], { runner: today({ threshold: 10 }) });
    expect(report.sessions[0]?.divergence).toMatchObject({
      turn: 1,
      path: 'approvals[1].decision',
      expected: 'allow',
      actual: 'ask',
    });
  });

  it('a prompt edited: a store cassette keeps no request hashes, so the replay is still same', async () => {
    const report = await replay([byUser('u2')], { runner: today({ prompt: 'You triage, politely.' }) });
    expect(report.sessions[0]?.status).toBe('same');
  });

  it('a tool listed in live runs for real when a call is not recorded; otherwise tool_not_recorded', async () => {
    const edited: Cassette = {
      ...byUser('u2'),
      turns: [{ ...byUser('u2').turns[0]!, toolResults: byUser('u2').turns[0]!.toolResults.slice(0, 1) }],
    };
    const blocked = await replay([edited], { runner: today() });
    expect(blocked.sessions[0]?.divergences[0]).toMatchObject({ kind: 'tool_not_recorded', turn: 1 });
    const live = deskTools();
    const allowed = await replay([edited], { runner: today({}, live), live: ['refund'] });
    expect(allowed.sessions[0]?.status).toBe('same');
    expect(live.calls).toEqual(['refund']);
  });

  it('a model call past the recorded ones is model_call_not_recorded, naming the agent', async () => {
    const edited: Cassette = {
      ...byUser('u2'),
      turns: [{ ...byUser('u2').turns[0]!, modelCalls: byUser('u2').turns[0]!.modelCalls.slice(0, 2) }],
    };
    const report = await replay([edited], { runner: today() });
    expect(report.sessions[0]?.divergence).toMatchObject({
      kind: 'model_call_not_recorded',
      turn: 1,
      actual: 'billing',
    });
  });
});

describe('redaction', () => {
  it('a secret in a user message never reaches the cassette with redact', async () => {
    const d = mkdtempSync(join(tmpdir(), 'replay-redact-'));
    const s = new SqliteCheckpointStore({ path: join(d, 'r.db') });
    const runner = desk({ store: s, clock: steppingClock(), model: liveModel(), tools: deskTools().tools });
    await runner.handle({ channel: 'web', peer: { kind: 'dm', id: 'u9' }, text: 'my card is 4111111111111111' });
    await runner.close();
    const redact = (value: string): string => value.replace(/\d{16}/g, '[card]');
    const [cassette] = await exportCassettes(s, { redact });
    const text = JSON.stringify(cassette);
    expect(text).not.toContain('4111111111111111');
    expect(text).toContain('[card]');
    const report = await replay([cassette!], { runner: today() });
    expect(report.sessions[0]?.status).toBe('same');
    await s.close();
    rmSync(d, { recursive: true, force: true });
  });
});
