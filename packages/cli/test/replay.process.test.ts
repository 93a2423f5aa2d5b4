// `signalyard cassettes export`, `signalyard replay` and `signalyard eval` through the built
// command: a store written by the app → cassettes → replays against the --config runner; exit
// code 1 when a change reroutes a conversation or scores fall below the threshold.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { createRunner } from 'signalyard';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deskOptions, liveModel } from './fixtures/replay/desk.config.js';
import { FIXTURES, BUILD_TIMEOUT_MS, ensureBuiltCli, runBuiltCli } from './support.js';

vi.setConfig({ testTimeout: 120_000 });

const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-replay-'));
const db = join(dir, 'app.db');
const out = join(dir, 'cassettes');
const CONFIG = join(FIXTURES, 'replay', 'desk.config.js');
const FORBID = { REPLAY_FORBID_TOOLS: '1' };

beforeAll(async () => {
  ensureBuiltCli();
  const store = new SqliteCheckpointStore({ path: db });
  const runner = createRunner(deskOptions({ store, model: liveModel() }));
  await runner.handle({ channel: 'web', peer: { kind: 'dm', id: 'u1' }, text: 'hello' });
  await runner.handle({ channel: 'web', peer: { kind: 'dm', id: 'u2' }, text: 'a refund please' });
  await runner.close();
  await store.close();
}, BUILD_TIMEOUT_MS);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('signalyard cassettes export / replay / eval', () => {
  it('exports one cassette per session, then replays them all the same (exit 0, no tool run)', async () => {
    const exported = await runBuiltCli(['cassettes', 'export', '--store', `sqlite:${db}`, '--out', out]);
    expect(exported).toMatchObject({ code: 0, stderr: '' });
    expect(exported.stdout).toContain('2 cassettes (2 turns, 0 partial) written to');
    expect(readdirSync(out)).toHaveLength(2);
    const replayed = await runBuiltCli(['replay', out, '--config', CONFIG], { env: FORBID });
    expect(replayed.stderr).toBe('');
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toContain('sessions 2, same 2, diverged 0, failed 0, partial 0');
    expect(replayed.stdout).toMatch(/agent:desk:dm:u2\s+same/);
  });

  it('a renamed marker reroutes the refund: exit 1, the first divergence in the table and in --json', async () => {
    const env = { ...FORBID, REPLAY_MARKER: '[TO_PAYMENTS]' };
    const table = await runBuiltCli(['replay', out, '--config', CONFIG], { env });
    expect(table.code).toBe(1);
    expect(table.stdout).toContain('sessions 2, same 1, diverged 1');
    expect(table.stdout).toMatch(/agent:desk:dm:u2\s+diverged\s+turn 1 › handoffs\[0\]/);
    expect(table.stderr).toContain('1 of 2 sessions diverged or failed');
    const json = await runBuiltCli(['replay', out, '--config', CONFIG, '--json'], { env });
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { diverged: number; sessions: { divergence?: { turn: number } }[] };
    expect(report.diverged).toBe(1);
    expect(report.sessions[1]?.divergence?.turn).toBe(1);
  });

  it('eval: passes at the threshold with the config’s extra scorers; exit 1 below it', async () => {
    const ok = await runBuiltCli(['eval', out, '--config', CONFIG, '--threshold', '0.9'], { env: FORBID });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/sameRoute\s+1\.000/);
    expect(ok.stdout).toMatch(/turns\s+1\.000/);
    expect(ok.stdout).toContain('passed (threshold 0.9)');
    const env = { ...FORBID, REPLAY_MARKER: '[TO_PAYMENTS]' };
    const low = await runBuiltCli(['eval', out, '--config', CONFIG, '--threshold', '0.9', '--scorer', 'sameHandoffs'], {
      env,
    });
    expect(low.code).toBe(1);
    expect(low.stdout).toMatch(/sameHandoffs\s+0\.500/);
    expect(low.stderr).toContain('scores below the threshold 0.9');
  });

  it('a plain RunnerOptions config is refused (exit 2) — it would run the real model and tools', async () => {
    const plain = await runBuiltCli(['replay', out, '--config', join(FIXTURES, 'replay', 'plain.config.js')]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('replay needs a default export function ({ store, clock, model, tools }) => Runner');
  });

  it('bad input: a missing cassette folder, a threshold out of range, a missing subcommand (exit 2)', async () => {
    const missing = await runBuiltCli(['replay', join(dir, 'nope'), '--config', CONFIG]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Cannot read');
    const threshold = await runBuiltCli(['eval', out, '--config', CONFIG, '--threshold', '3']);
    expect(threshold.code).toBe(2);
    expect(threshold.stderr).toContain('expected a number from 0 to 1');
    const bare = await runBuiltCli(['cassettes']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('missing subcommand: export');
  });
});
