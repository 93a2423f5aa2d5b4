import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// Adversarial replies must be matched in linear time. Instead of asserting a duration (flaky),
// the matching runs in a child process with a hang guard: a quadratic or backtracking matcher
// would take hours on these 1 MB inputs, the guard would kill it, and the test would fail. The
// guard is far beyond what a loaded machine needs (about a second here): a hang, not a speed.
const DEADLINE_MS = 60_000;

interface CaseResult {
  length: number;
  matchAll: number[];
  first: number | null;
  levels: (string | null)[];
}

function runFixture(): Promise<Record<string, CaseResult>> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const fixture = fileURLToPath(new URL('./fixtures/adversarial.ts', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@signalyard/source', '--import', tsx, fixture], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`matching adversarial input did not finish within ${DEADLINE_MS} ms: the matcher is not linear`),
      );
    }, DEADLINE_MS);
    child.on('error', (error) => {
      clearTimeout(guard);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(guard);
      if (code !== 0) reject(new Error(`fixture exited with ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, CaseResult>);
    });
  });
}

describe('adversarial replies (child process with a hang guard)', () => {
  it(
    'matches 1 MB adversarial replies without hanging, with the right results',
    async () => {
      const r = await runFixture();
      const MB = 1 << 20;
      // signals: [DONE], [ROUTE_EXECUTOR], [DO NE], [READY TO GO], [], plain text, [[handoff:coder]]
      expect(r.openBrackets).toEqual({
        length: MB,
        matchAll: [],
        first: null,
        levels: [null, null, null, null, null, null, null],
      });
      // the innermost span is "[]", which is the signal "[]" itself
      expect(r.openBracketsClosedOnce).toEqual({
        length: MB,
        matchAll: [4],
        first: 4,
        levels: [null, null, null, null, 'exact', null, null],
      });
      expect(r.randomText!.length).toBe(MB);
      expect(r.randomText!.first).toBe(r.randomText!.matchAll[0] ?? null);
      expect(r.randomText!.matchAll).toEqual(r.randomText!.levels.flatMap((l, i) => (l === null ? [] : [i])));
      // longer than the 200-unit window: only plain substring matches could hit, and none does
      expect(r.whitespaceRunsInOneBracket).toMatchObject({
        matchAll: [],
        levels: [null, null, null, null, null, null, null],
      });
      // every small span normalises to "[do ne]"
      expect(r.whitespaceRunsInManyBrackets).toMatchObject({
        matchAll: [2],
        first: 2,
        levels: [null, null, 'normalized', null, null, null, null],
      });
    },
    DEADLINE_MS + 5_000,
  );
});
