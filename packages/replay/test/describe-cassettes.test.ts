// The Vitest helper: one test per cassette (these below run the recorded desk week, each `same`),
// and what each test does with a divergence or a failure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cassetteTests } from '../src/cassette-tests.js';
import { loadCassettes, saveCassettes, type ReplayRunnerParts } from '../src/index.js';
import { describeCassettes } from '../src/vitest.js';
import { desk, throwingTools, type DeskChanges } from './desk.js';

const week = fileURLToPath(new URL('./fixtures/desk-week', import.meta.url));
const today =
  (changes: DeskChanges = {}) =>
  (parts: ReplayRunnerParts) =>
    desk({ ...parts, tools: parts.tools(throwingTools().tools) }, changes);

describeCassettes(week, today(), { name: 'the recorded desk week, replayed today' });

describe('cassetteTests (what describeCassettes declares)', () => {
  it('one test per cassette, named by session key; a divergence fails its test with the divergence', async () => {
    const tests = cassetteTests(week, today({ threshold: 10 }), undefined);
    expect(tests.map((t) => t.name)).toEqual([
      'agent:desk:dm:u1',
      'agent:desk:dm:u2',
      'agent:desk:dm:u3',
      'agent:desk:dm:u4',
      'agent:desk:dm:u5',
    ]);
    await expect(tests[0]!.run()).resolves.toBeUndefined();
    await expect(tests[1]!.run()).rejects.toThrow(
      'Session agent:desk:dm:u2 diverged: turn 1 › approvals[1].decision: allow → ask',
    );
  });

  it('a runner factory that throws fails each test with the error', async () => {
    const tests = cassetteTests(
      [week],
      () => {
        throw new Error('bad config');
      },
      ['refund'],
    );
    await expect(tests[0]!.run()).rejects.toThrow('failed: The runner factory threw: bad config');
  });

  it('a cassette whose first turn is partial gives a skipped test, named with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replay-skip-'));
    try {
      const [cassette] = await loadCassettes(week);
      const first = {
        ...cassette!,
        turns: [{ ...cassette!.turns[0]!, partial: { reason: 'payload_missing' as const } }],
      };
      await saveCassettes(dir, [first]);
      const tests = cassetteTests(dir, today(), undefined);
      expect(tests.map((t) => [t.name, t.skip])).toEqual([['agent:desk:dm:u1', 'turn 1 is partial: payload_missing']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('unreadable cassettes throw while the file is collected', () => {
    expect(() => cassetteTests('/nonexistent/cassettes', today(), undefined)).toThrow(/Cannot read/);
  });
});
