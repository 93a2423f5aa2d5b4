// `signalyard sessions …` in-process against a temporary SQLite file, whose sessions are written
// with the store directly (as a Runner would have saved them).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionCheckpointV1 } from '@signalyard/core';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { collect } from '@signalyard/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { PENDING, SUPPORT_VERSIONS, seed, sessionOf, withoutTimes } from './session-fixtures.js';
import { lines, runInProcess, type CliResult } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-sessions-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
/** A new database file with `agent:support:main` (4 versions), `agent:support:side` and `agent:billing:main`. */
async function database(keepVersions?: number): Promise<{ file: string; url: string }> {
  const file = `db-${++files}.db`;
  const store = new SqliteCheckpointStore({
    path: join(dir, file),
    ...(keepVersions !== undefined && { keepVersions }),
  });
  await seed(store, 'agent:support:main');
  await seed(store, 'agent:support:side', [sessionOf('support', 'side talk')]);
  await seed(store, 'agent:billing:main', [sessionOf('billing', 'invoice?')]);
  await store.close();
  return { file, url: `sqlite:${file}` };
}

/** The command run in the temporary directory. */
const cli = (args: readonly string[]): Promise<CliResult> => runInProcess(args, { cwd: dir });

/** Reads the store directly (a fresh connection). */
async function stored<T>(file: string, fn: (store: SqliteCheckpointStore) => Promise<T>): Promise<T> {
  const store = new SqliteCheckpointStore({ path: join(dir, file) });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Exit `code` with exactly one line on stderr, nothing on stdout. */
function expectError(result: CliResult, code: number, pattern: RegExp): void {
  expect(result.stdout).toBe('');
  expect(lines(result.stderr)).toHaveLength(1);
  expect(result.stderr).toMatch(/^signalyard: error: /);
  expect(result.stderr).toMatch(pattern);
  expect(result.code).toBe(code);
}

describe('sessions list', () => {
  it('lists every session in key order: key, agent, version, updated', async () => {
    const { url } = await database();
    const result = await cli(['sessions', 'list', '--store', url]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(lines(withoutTimes(result.stdout))).toEqual([
      'SESSION             AGENT    VERSION  UPDATED',
      'agent:billing:main  billing        1  YYYY-MM-DDTHH:MM:SS.sssZ',
      'agent:support:main  support        4  YYYY-MM-DDTHH:MM:SS.sssZ',
      'agent:support:side  support        1  YYYY-MM-DDTHH:MM:SS.sssZ',
    ]);
  });

  it('--prefix, --after and --limit page through the keys; --json prints one object per line', async () => {
    const { url } = await database();
    const page = async (...args: string[]): Promise<unknown[]> => {
      const result = await cli(['sessions', 'list', '--store', url, '--json', ...args]);
      expect(result.code).toBe(0);
      return lines(result.stdout).map((l) => JSON.parse(l) as unknown);
    };
    const first = await page('--limit', '2');
    expect(first).toEqual([
      { sessionKey: 'agent:billing:main', agentId: 'billing', version: 1, updatedAt: expect.any(String) },
      { sessionKey: 'agent:support:main', agentId: 'support', version: 4, updatedAt: expect.any(String) },
    ]);
    expect(await page('--limit', '2', '--after', 'agent:support:main')).toEqual([
      { sessionKey: 'agent:support:side', agentId: 'support', version: 1, updatedAt: expect.any(String) },
    ]);
    expect(await page('--prefix', 'agent:support:')).toHaveLength(2);
    expect(await page('--prefix', 'agent:nobody:')).toEqual([]);
  });

  it('says so when nothing matches', async () => {
    const { url } = await database();
    expect(await cli(['sessions', 'list', '--store', url, '--prefix', 'agent:x:'])).toEqual({
      code: 0,
      stdout: 'no sessions with prefix "agent:x:"\n',
      stderr: '',
    });
  });

  it('a checkpoint that is not a session still lists, with no agent', async () => {
    const { file, url } = await database();
    await stored(file, (s) => s.save('legacy', 'not a session', 0));
    const json = await cli(['sessions', 'list', '--store', url, '--json', '--after', 'agent:support:side']);
    expect(lines(json.stdout).map((l) => JSON.parse(l) as unknown)).toEqual([
      { sessionKey: 'legacy', agentId: null, version: 1, updatedAt: expect.any(String) },
    ]);
    const table = await cli(['sessions', 'list', '--store', url, '--prefix', 'legacy']);
    expect(lines(withoutTimes(table.stdout))[1]).toBe('legacy   -            1  YYYY-MM-DDTHH:MM:SS.sssZ');
  });

  it('--limit and --keep-versions take integers only', async () => {
    const { url } = await database();
    expectError(await cli(['sessions', 'list', '--store', url, '--limit', '0']), 2, /--limit <n>.*'0' is invalid/);
    expectError(await cli(['sessions', 'list', '--store', url, '--limit', '2x']), 2, /'2x' is invalid/);
    expectError(await cli(['sessions', 'list', '--store', url, '--keep-versions', '-1']), 2, /'-1' is invalid/);
    expectError(
      await cli(['sessions', 'list', '--store', url, '--limit', 'x']),
      2,
      /see 'signalyard sessions list --help'\n$/,
    );
  });
});

describe('sessions history', () => {
  it('prints the version timeline newest first: version, time, cause, route, status', async () => {
    const { url } = await database();
    const result = await cli(['sessions', 'history', 'agent:support:main', '--store', url]);
    expect(result.code).toBe(0);
    expect(lines(withoutTimes(result.stdout))).toEqual([
      'VERSION  TIME                      CAUSE                                  ROUTE           STATUS',
      '      4  YYYY-MM-DDTHH:MM:SS.sssZ  user_message "thanks", +2 merged       strategy/close  completed',
      '      3  YYYY-MM-DDTHH:MM:SS.sssZ  tool_approval, 1 approved, 0 denied    plugin          completed',
      '      2  YYYY-MM-DDTHH:MM:SS.sssZ  user_message "refund my order please"  agent/refund    paused',
      '      1  YYYY-MM-DDTHH:MM:SS.sssZ  user_message "hello"                   strategy/greet  completed',
    ]);
  });

  it('--json prints what Runner.history yields, one version per line', async () => {
    const { url } = await database();
    const result = await cli(['sessions', 'history', 'agent:support:main', '--store', url, '--json']);
    const versions = lines(result.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(versions.map((v) => v.version)).toEqual([4, 3, 2, 1]);
    expect(versions[2]).toEqual({
      version: 2,
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      agentId: 'support',
      cause: SUPPORT_VERSIONS[1]?.cause,
      strategy: { type: 'fsm', current_state: 'in_progress' },
      historyLength: 3,
      pendingApprovals: 1,
    });
  });

  it('--before and --limit page through the versions', async () => {
    const { url } = await database();
    const versions = async (...args: string[]): Promise<unknown[]> => {
      const result = await cli(['sessions', 'history', 'agent:support:main', '--store', url, '--json', ...args]);
      return lines(result.stdout).map((l) => (JSON.parse(l) as { version: number }).version);
    };
    expect(await versions('--limit', '2')).toEqual([4, 3]);
    expect(await versions('--before', '3', '--limit', '1')).toEqual([2]);
    expect(await versions('--before', '1')).toEqual([]);
    const table = await cli(['sessions', 'history', 'agent:support:main', '--store', url, '--before', '1']);
    expect(table).toEqual({ code: 0, stdout: 'no versions of agent:support:main before 1\n', stderr: '' });
  });

  it('lists only the versions the store keeps (--keep-versions sets how many are read)', async () => {
    const { url } = await database(1);
    const count = async (...args: string[]): Promise<number> =>
      lines((await cli(['sessions', 'history', 'agent:support:main', '--store', url, '--json', ...args])).stdout)
        .length;
    expect(await count('--keep-versions', '1')).toBe(2);
    expect(await count('--keep-versions', '0')).toBe(1);
  });

  it('a fork and a rewind show where they came from', async () => {
    const { url } = await database();
    await cli(['sessions', 'rewind', 'agent:support:main', '2', '--store', url]);
    await cli(['sessions', 'fork', 'agent:support:main', 'agent:support:copy', '--version', '3', '--store', url]);
    const main = await cli(['sessions', 'history', 'agent:support:main', '--store', url, '--limit', '1']);
    expect(lines(withoutTimes(main.stdout))[1]).toBe('      5  YYYY-MM-DDTHH:MM:SS.sssZ  rewound to 2  -      -');
    const copy = await cli(['sessions', 'history', 'agent:support:copy', '--store', url]);
    expect(lines(withoutTimes(copy.stdout))[1]).toBe(
      '      1  YYYY-MM-DDTHH:MM:SS.sssZ  forked from agent:support:main@3  -      -',
    );
  });

  it('control characters in a stored message never reach the terminal', async () => {
    const { file, url } = await database();
    const text = 'red \u001b[31malert\u0007 done';
    await stored(file, (s) => s.save('agent:support:evil', sessionOf('support', text), 0));
    const result = await cli(['sessions', 'history', 'agent:support:evil', '--store', url]);
    expect(Array.from(result.stdout, (c) => c.charCodeAt(0)).filter((c) => c < 0x20 && c !== 0x0a)).toEqual([]);
    expect(result.stdout).toContain('user_message "red \\u001b[31malert\\u0007 done"');
  });

  it('an unknown session is exit 1; a bad key is exit 2', async () => {
    const { url } = await database();
    expectError(
      await cli(['sessions', 'history', 'agent:support:nobody', '--store', url]),
      1,
      /cannot list the history of session "agent:support:nobody": it has no checkpoint in the store/,
    );
    expectError(
      await cli(['sessions', 'history', 'support-main', '--store', url]),
      2,
      /session key "support-main" is not a session key: wrong prefix/,
    );
  });
});

describe('sessions show', () => {
  it('prints the agent, version, cause, strategy, pending approvals and the end of the history', async () => {
    const { url } = await database();
    const result = await cli(['sessions', 'show', 'agent:support:main', '--store', url, '--tail', '2']);
    expect(result.code).toBe(0);
    expect(lines(withoutTimes(result.stdout))).toEqual([
      'session: agent:support:main',
      'agent: support',
      'version: 4 (current), saved YYYY-MM-DDTHH:MM:SS.sssZ',
      'cause: user_message "thanks", +2 merged · strategy/close · completed',
      'strategy: {"type":"fsm","current_state":"resolved"}',
      'pending approvals: 0',
      'history: 6 messages, the last 2:',
      '  user: thanks',
      '  assistant (support): done: 40 refunded',
    ]);
  });

  it('--version shows a past version; --json prints it as data', async () => {
    const { url } = await database();
    const text = await cli(['sessions', 'show', 'agent:support:main', '--store', url, '--version', '2', '--tail', '0']);
    expect(lines(withoutTimes(text.stdout))).toEqual([
      'session: agent:support:main',
      'agent: support',
      'version: 2 (current: 4), saved YYYY-MM-DDTHH:MM:SS.sssZ',
      'cause: user_message "refund my order please" · agent/refund · paused',
      'strategy: {"type":"fsm","current_state":"in_progress"}',
      'pending approvals: 1',
      'history: 3 messages, the last 0',
    ]);
    const json = await cli(['sessions', 'show', 'agent:support:main', '--store', url, '--version', '3', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({
      sessionKey: 'agent:support:main',
      version: 3,
      currentVersion: 4,
      updatedAt: expect.any(String),
      agentId: 'support',
      cause: SUPPORT_VERSIONS[2]?.cause,
      strategy: { type: 'fsm', current_state: 'in_progress' },
      pendingApprovals: 0,
      historyLength: 4,
      historyTail: SUPPORT_VERSIONS[2]?.history,
    });
  });

  it('a version above the current one, or one no longer kept, is exit 1 naming what is available', async () => {
    const { url } = await database(1);
    expectError(
      await cli(['sessions', 'show', 'agent:support:main', '--store', url, '--version', '9']),
      1,
      /version 9 of session "agent:support:main" is not available: the current version is 4\n$/,
    );
    expectError(
      await cli(['sessions', 'show', 'agent:support:main', '--store', url, '--keep-versions', '1', '--version', '1']),
      1,
      /version 1 of session "agent:support:main" is not available: the oldest version kept is 3 /,
    );
  });

  it('a checkpoint that is not a session checkpoint is exit 1, naming the problem', async () => {
    const { file, url } = await database();
    await stored(file, (s) => s.save('agent:support:v2', { ...sessionOf('support'), v: 2 }, 0));
    expectError(
      await cli(['sessions', 'show', 'agent:support:v2', '--store', url]),
      1,
      /cannot read the checkpoint of session "agent:support:v2": unknown checkpoint format version v=2/,
    );
  });
});

describe('sessions fork', () => {
  it('writes version 1 of a new session with cause.forkedFrom and no pending approvals; the source is untouched', async () => {
    const { file, url } = await database();
    const result = await cli([
      'sessions',
      'fork',
      'agent:support:main',
      'agent:support:what-if',
      '--version',
      '2',
      '--store',
      url,
    ]);
    expect(result).toEqual({
      code: 0,
      stdout: 'forked agent:support:main version 2 into agent:support:what-if (version 1)\n',
      stderr: '',
    });
    await stored(file, async (s) => {
      const fork = await s.load('agent:support:what-if');
      expect(fork?.version).toBe(1);
      const { cause, ...rest } = fork?.data as SessionCheckpointV1;
      // The pending approval is not re-opened: it is stale, and the engine is told on its next turn.
      const { pendingApprovals: _pending, ...withoutPending } = SUPPORT_VERSIONS[1] as SessionCheckpointV1;
      expect(rest).toEqual({
        ...withoutPending,
        cause: undefined,
        staleApprovals: [{ id: PENDING.id, reason: 'stale: forked' }],
      });
      expect(cause).toEqual({
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        forkedFrom: { sessionKey: 'agent:support:main', version: 2 },
      });
      expect((await collect(s.history('agent:support:main'))).map((c) => c.data)).toEqual(
        [...SUPPORT_VERSIONS].reverse(),
      );
    });
  });

  it('copies the current version by default, keeping unknown top-level fields', async () => {
    const { file, url } = await database();
    expect((await cli(['sessions', 'fork', 'agent:support:main', 'agent:support:b', '--store', url])).code).toBe(0);
    const data = await stored(file, async (s) => (await s.load('agent:support:b'))?.data as Record<string, unknown>);
    expect(data.future).toEqual({ note: 'kept' });
    expect(data.cause).toMatchObject({ forkedFrom: { sessionKey: 'agent:support:main', version: 4 } });
    expect(data.history).toEqual(SUPPORT_VERSIONS[3]?.history);
  });

  it('into an existing session: exit 1 and nothing written', async () => {
    const { file, url } = await database();
    expectError(
      await cli(['sessions', 'fork', 'agent:support:main', 'agent:support:side', '--store', url]),
      1,
      /cannot fork into session "agent:support:side": it already exists/,
    );
    expect(await stored(file, (s) => s.load('agent:support:side'))).toMatchObject({ version: 1 });
  });

  it("into another agent's key: exit 1 naming both agents, nothing written", async () => {
    const { file, url } = await database();
    expectError(
      await cli(['sessions', 'fork', 'agent:support:main', 'agent:billing:copy', '--store', url]),
      1,
      /of agent "support" into "agent:billing:copy", a session of agent "billing"/,
    );
    expect(await stored(file, (s) => s.load('agent:billing:copy'))).toBeUndefined();
  });

  it('a pruned version: exit 1 naming the oldest version kept', async () => {
    const { url } = await database(2);
    expectError(
      await cli(['sessions', 'fork', 'agent:support:main', 'agent:support:c', '--version', '1', '--store', url]),
      1,
      /version 1 of session "agent:support:main" is not available: the oldest version kept is 2 /,
    );
  });

  it('from a missing session, or with bad keys: an error naming the key', async () => {
    const { url } = await database();
    expectError(
      await cli(['sessions', 'fork', 'agent:support:none', 'agent:support:c', '--store', url]),
      1,
      /cannot fork session "agent:support:none": it has no checkpoint/,
    );
    expectError(
      await cli(['sessions', 'fork', 'agent:support:main', 'agent::c', '--store', url]),
      2,
      /session key <to> "agent::c" is not a session key: empty segment 2/,
    );
    expectError(
      await cli(['sessions', 'fork', 'agent:support:main', 'agent:support:c', '--version', '0', '--store', url]),
      2,
      /'0' is invalid\. expected a session version, an integer >= 1; see 'signalyard sessions fork --help'/,
    );
  });
});

describe('sessions rewind', () => {
  it("saves a new version whose data equals the old version's, with cause.rewoundTo; the versions between stay", async () => {
    const { file, url } = await database();
    expect(await cli(['sessions', 'rewind', 'agent:support:main', '2', '--store', url])).toEqual({
      code: 0,
      stdout: 'rewound agent:support:main to version 2: saved as version 5\n',
      stderr: '',
    });
    await stored(file, async (s) => {
      const history = await collect(s.history('agent:support:main'));
      expect(history.map((c) => c.version)).toEqual([5, 4, 3, 2, 1]);
      const { cause, ...rest } = history[0]?.data as SessionCheckpointV1;
      // The pending approval is not re-opened: it is stale, and the engine is told on its next turn.
      const { pendingApprovals: _pending, ...withoutPending } = SUPPORT_VERSIONS[1] as SessionCheckpointV1;
      expect(rest).toEqual({
        ...withoutPending,
        cause: undefined,
        staleApprovals: [{ id: PENDING.id, reason: 'stale: rewound' }],
      });
      expect(cause).toEqual({ at: expect.any(String), rewoundTo: 2 });
      expect(history[3]?.data).toEqual(SUPPORT_VERSIONS[1]); // the pending approval stays in version 2
      expect((history[3]?.data as SessionCheckpointV1).pendingApprovals).toEqual([PENDING]);
    });
  });

  it('a rewind can be undone by rewinding to the version before it, keeping unknown fields', async () => {
    const { file, url } = await database();
    await cli(['sessions', 'rewind', 'agent:support:main', '1', '--store', url]);
    expect((await cli(['sessions', 'rewind', 'agent:support:main', '4', '--store', url])).code).toBe(0);
    const current = await stored(file, (s) => s.load('agent:support:main'));
    expect(current?.version).toBe(6);
    expect(current?.data).toEqual({
      ...SUPPORT_VERSIONS[3],
      cause: { at: expect.any(String), rewoundTo: 4 },
    });
  });

  it('a pruned version, a version above the current one, a missing session: exit 1, nothing written', async () => {
    const { file, url } = await database(1);
    expectError(
      await cli(['sessions', 'rewind', 'agent:support:main', '1', '--store', url, '--keep-versions', '1']),
      1,
      /the oldest version kept is 3 /,
    );
    expectError(
      await cli(['sessions', 'rewind', 'agent:support:main', '5', '--store', url]),
      1,
      /version 5 of session "agent:support:main" is not available: the current version is 4/,
    );
    expectError(
      await cli(['sessions', 'rewind', 'agent:support:gone', '1', '--store', url]),
      1,
      /cannot rewind session "agent:support:gone": it has no checkpoint/,
    );
    expect(await stored(file, (s) => s.load('agent:support:main'))).toMatchObject({ version: 4 });
    expectError(
      await cli(['sessions', 'rewind', 'agent:support:main', 'two', '--store', url]),
      2,
      /value 'two' is invalid for argument 'version'/,
    );
  });
});

describe('sessions delete', () => {
  it('removes the session and its whole history', async () => {
    const { file, url } = await database();
    expect(await cli(['sessions', 'delete', 'agent:support:main', '--store', url])).toEqual({
      code: 0,
      stdout: 'deleted agent:support:main (version 4 and its history)\n',
      stderr: '',
    });
    await stored(file, async (s) => {
      expect(await s.load('agent:support:main')).toBeUndefined();
      expect(await collect(s.history('agent:support:main'))).toEqual([]);
      expect(await s.load('agent:support:side')).toBeDefined();
    });
    expectError(
      await cli(['sessions', 'delete', 'agent:support:main', '--store', url]),
      1,
      /cannot delete session "agent:support:main": it has no checkpoint/,
    );
  });
});

describe('--store', () => {
  it('names a bad store URL and what was expected (exit 2)', async () => {
    const list = (store: string): Promise<CliResult> => cli(['sessions', 'list', '--store', store]);
    expectError(
      await list('mysql://db/x'),
      2,
      /--store "mysql:\/\/db\/x": unknown store type "mysql:": expected sqlite:<path>/,
    );
    expectError(await list('sessions.db'), 2, /--store "sessions.db": expected sqlite:<path> .* or a postgres:\/\//);
    expectError(await list('sqlite:'), 2, /--store "sqlite:": the SQLite file is missing/);
    expectError(await list('sqlite::memory:'), 2, /--store "sqlite::memory:": an in-memory database/);
    expectError(await list('sqlite://rel.db'), 2, /--store "sqlite:\/\/rel.db": write sqlite:<path> without "\/\/"/);
    expectError(await list('postgres://app:s3cret@[bad/x'), 2, /--store "postgres:\/\/app:\*\*\*@\[bad\/x": not a URL/);
    expectError(await cli(['sessions', 'list']), 2, /required option '--store <url>' not specified/);
  });

  it('an SQLite file must exist and be a database: the command never creates one', async () => {
    mkdirSync(join(dir, 'a-directory'), { recursive: true });
    writeFileSync(join(dir, 'not-a-db.db'), 'hello, I am text and not a database at all'.repeat(20));
    expectError(
      await cli(['sessions', 'list', '--store', 'sqlite:missing.db']),
      2,
      /cannot open "sqlite:missing.db": no such file/,
    );
    expectError(await cli(['sessions', 'list', '--store', 'sqlite:a-directory']), 2, /it is not a file/);
    expectError(
      await cli(['sessions', 'list', '--store', 'sqlite:not-a-db.db']),
      2,
      /cannot open "sqlite:not-a-db.db": /,
    );
  });

  it('sqlite:///absolute/path and sqlite:/absolute/path name the same file', async () => {
    const { file } = await database();
    for (const url of [`sqlite:${join(dir, file)}`, `sqlite://${join(dir, file)}`]) {
      const result = await runInProcess(['sessions', 'list', '--store', url, '--json'], { cwd: '/' });
      expect(lines(result.stdout)).toHaveLength(3);
    }
  });

  it('--table is for PostgreSQL only', async () => {
    const { url } = await database();
    expectError(
      await cli(['sessions', 'list', '--store', url, '--table', 'x']),
      2,
      /--table "x" applies to a postgres:\/\/ store only/,
    );
  });
});
