// The parts of `signalyard sessions`: the --store parser, the error classes, the text of a cause,
// and fork and rewind racing another writer.
import { MemoryCheckpointStore, SignalyardError, type SessionCheckpointV1 } from '@signalyard/core';
import { rejectsCode, throwsCode } from '@signalyard/test-utils';
import { describe, expect, it } from 'vitest';
import { CliInputError } from '../src/errors/cli-input-error.js';
import { CliReplayError } from '../src/errors/cli-replay-error.js';
import { CliSessionError } from '../src/errors/cli-session-error.js';
import { CliStoreError } from '../src/errors/cli-store-error.js';
import { CliUsageError } from '../src/errors/cli-usage-error.js';
import { forkSession, rewindSession } from '../src/offline-timeline.js';
import { storeError, type HistoryStore } from '../src/open-store.js';
import { decodeSessionCheckpoint } from '../src/session-checkpoint-data.js';
import { causeText, oneLine, routeText } from '../src/session-format.js';
import { maskPassword, parseStoreUrl } from '../src/store-url.js';
import { seed, sessionOf } from './session-fixtures.js';

describe('parseStoreUrl', () => {
  it('reads sqlite:<path> and postgres:// / postgresql:// connection strings', () => {
    expect(parseStoreUrl('sqlite:sessions.db')).toEqual({
      kind: 'sqlite',
      path: 'sessions.db',
      shown: 'sqlite:sessions.db',
    });
    expect(parseStoreUrl('SQLite:./a/b.db')).toMatchObject({ kind: 'sqlite', path: './a/b.db' });
    expect(parseStoreUrl('sqlite:///var/lib/s.db')).toMatchObject({ kind: 'sqlite', path: '/var/lib/s.db' });
    expect(parseStoreUrl('postgres://app:pw@db:5432/agents')).toEqual({
      kind: 'postgres',
      connectionString: 'postgres://app:pw@db:5432/agents',
      shown: 'postgres://app:***@db:5432/agents',
    });
    expect(parseStoreUrl('postgresql:///agents?host=/run/postgresql')).toMatchObject({ kind: 'postgres' });
  });

  it('refuses anything else with CLI_STORE_URL_INVALID, naming the value with its password masked', () => {
    for (const bad of [
      '',
      'sessions.db',
      'mysql://db/x',
      'sqlite:',
      'sqlite:  ',
      'sqlite::memory:',
      'sqlite://x.db',
      'sqlite:a\u0000b',
    ]) {
      const error = throwsCode(() => parseStoreUrl(bad), 'CLI_STORE_URL_INVALID');
      expect(CliStoreError.isInstance(error)).toBe(true);
      expect(error.message).toContain(`--store ${JSON.stringify(bad)}`);
    }
    const error = throwsCode(() => parseStoreUrl('postgres://u:secret@[x/db'), 'CLI_STORE_URL_INVALID');
    expect(error.message).not.toContain('secret');
    expect(CliStoreError.isInstance(error) && error.store).toBe('postgres://u:***@[x/db');
  });

  it('maskPassword hides only the password', () => {
    expect(maskPassword('postgres://app:p%40ss@db/x')).toBe('postgres://app:***@db/x');
    expect(maskPassword('postgres://app@db/x')).toBe('postgres://app@db/x');
    expect(maskPassword('Cannot list: connect ECONNREFUSED 127.0.0.1:5432')).toBe(
      'Cannot list: connect ECONNREFUSED 127.0.0.1:5432',
    );
  });
});

describe('the error classes', () => {
  it('each isInstance recognises its own class only', () => {
    const store = new CliStoreError({ code: 'CLI_STORE_FAILED', store: 'sqlite:x', message: 'm' });
    const session = new CliSessionError({ code: 'CLI_SESSION_CONFLICT', sessionKey: 'agent:a:main', message: 'm' });
    expect(CliStoreError.isInstance(store)).toBe(true);
    expect(CliSessionError.isInstance(session)).toBe(true);
    for (const other of [
      new CliUsageError({ message: 'm' }),
      new CliInputError({ file: 'f', message: 'm' }),
      new SignalyardError({ code: 'X', message: 'm' }),
      new Error('m'),
      null,
      'CLI_STORE_FAILED',
    ]) {
      expect(CliStoreError.isInstance(other)).toBe(false);
      expect(CliSessionError.isInstance(other)).toBe(false);
    }
    expect(CliStoreError.isInstance(session)).toBe(false);
    expect(CliSessionError.isInstance(store)).toBe(false);
    expect(SignalyardError.isInstance(store) && SignalyardError.isInstance(session)).toBe(true);
    expect([store.store, session.sessionKey, store.name, session.name]).toEqual([
      'sqlite:x',
      'agent:a:main',
      'CliStoreError',
      'CliSessionError',
    ]);
  });

  it("storeError names the store and sorts the stores' codes into CLI codes", () => {
    const pgError = (code: string, pgCode?: string): SignalyardError =>
      Object.assign(
        new SignalyardError({ code, message: 'Cannot list checkpoints: boom' }),
        pgCode === undefined ? {} : { pgCode, table: 't' },
      );
    const codeOf = (error: unknown): string | undefined =>
      (storeError(error, 'postgres://db/x') as SignalyardError).code;
    expect(codeOf(pgError('SCHEMA_OUTDATED'))).toBe('CLI_STORE_SCHEMA_OUTDATED');
    expect(codeOf(pgError('POSTGRES_OPERATION_FAILED', '42P01'))).toBe('CLI_STORE_UNAVAILABLE');
    expect(codeOf(pgError('POSTGRES_OPERATION_FAILED', 'ECONNREFUSED'))).toBe('CLI_STORE_UNAVAILABLE');
    expect(codeOf(pgError('POSTGRES_OPERATION_FAILED', '28P01'))).toBe('CLI_STORE_UNAVAILABLE');
    expect(codeOf(pgError('POSTGRES_OPERATION_FAILED'))).toBe('CLI_STORE_UNAVAILABLE');
    expect(codeOf(pgError('POSTGRES_OPERATION_FAILED', '40001'))).toBe('CLI_STORE_FAILED');
    expect(codeOf(pgError('POSTGRES_MIGRATE_FAILED'))).toBe('CLI_STORE_UNAVAILABLE');
    expect(codeOf(pgError('SQLITE_OPEN_FAILED'))).toBe('CLI_STORE_UNAVAILABLE');
    expect(codeOf(pgError('SQLITE_OPERATION_FAILED'))).toBe('CLI_STORE_FAILED');
    const message = (storeError(pgError('POSTGRES_DATA_CORRUPT'), 'postgres://a:***@db/x') as Error).message;
    expect(message).toBe('"postgres://a:***@db/x": Cannot list checkpoints: boom');
    const cli = new CliUsageError({ message: 'm' });
    expect(storeError(cli, 's')).toBe(cli);
    const bug = new TypeError('x');
    expect(storeError(bug, 's')).toBe(bug);
  });
});

describe('the text of a cause', () => {
  it('names the signal, approvals, merged messages, a fork and a rewind', () => {
    const at = '2025-01-01T00:00:00.000Z';
    expect(causeText(undefined)).toBe('-');
    expect(causeText({ at })).toBe('-');
    expect(causeText({ at, signal: { kind: 'user_message', text: 'hi\n  there' } })).toBe('user_message "hi there"');
    expect(causeText({ at, signal: { kind: 'custom:advance' } })).toBe('custom:advance');
    expect(
      causeText({
        at,
        signal: { kind: 'tool_approval' },
        approvals: [
          { id: 'a', approved: true },
          { id: 'b', approved: false, by: 'x' },
        ],
      }),
    ).toBe('tool_approval, 1 approved, 1 denied');
    expect(causeText({ at, signal: { kind: 'user_message', text: 'x' }, merged: 3 })).toBe(
      'user_message "x", +3 merged',
    );
    expect(causeText({ at, forkedFrom: { sessionKey: 'agent:a:main', version: 7 } })).toBe(
      'forked from agent:a:main@7',
    );
    expect(causeText({ at, rewoundTo: 2 })).toBe('rewound to 2');
    expect(causeText({ at, signal: { kind: 'user_message', text: 'y'.repeat(100) } })).toBe(
      `user_message "${'y'.repeat(39)}…"`,
    );
  });

  it('routeText is tier/route, either alone, or -', () => {
    const at = '';
    expect(routeText({ at, tier: 'strategy', routeName: 'greet' })).toBe('strategy/greet');
    expect(routeText({ at, tier: 'plugin' })).toBe('plugin');
    expect(routeText({ at, routeName: 'r' })).toBe('r');
    expect(routeText(undefined)).toBe('-');
  });

  it('oneLine flattens whitespace, shows control characters escaped and never cuts a surrogate pair', () => {
    expect(oneLine('a\u001b[2Jb\r\nc\u0085d', 80)).toBe('a\\x1b[2Jb c\\x85d');
    expect(oneLine('abcdef', 4)).toBe('abc…');
    expect(oneLine('ab😀cd', 4)).toBe('ab…');
    expect(oneLine('abc', 3)).toBe('abc');
  });
});

describe('a runner writing while the command writes', () => {
  /** A store where another writer saves `key` just before each of the command's saves. */
  function racing(inner: MemoryCheckpointStore): HistoryStore {
    return {
      load: (k) => inner.load(k),
      delete: (k) => inner.delete(k),
      list: (p) => inner.list(p),
      history: (k, o) => inner.history(k, o),
      loadVersion: (k, v) => inner.loadVersion(k, v),
      save: async (k, data, expected) => {
        await inner.save(k, sessionOf('support', 'meanwhile'), expected);
        return inner.save(k, data, expected);
      },
    };
  }

  it('a rewind is refused with CLI_SESSION_CONFLICT and writes nothing', async () => {
    const inner = new MemoryCheckpointStore();
    await seed(inner, 'agent:support:main');
    const error = await rejectsCode(rewindSession(racing(inner), 'agent:support:main', 1), 'CLI_SESSION_CONFLICT');
    expect(error.message).toMatch(/version 4 is now 5\); nothing was written/);
    const current = await inner.load('agent:support:main');
    expect(current?.version).toBe(5);
    expect((current?.data as SessionCheckpointV1).cause).not.toHaveProperty('rewoundTo');
  });

  it('a fork into a key created meanwhile is refused with SESSION_EXISTS', async () => {
    const inner = new MemoryCheckpointStore();
    await seed(inner, 'agent:support:main');
    const to = { key: 'agent:support:new', agentId: 'support' };
    await rejectsCode(forkSession(racing(inner), 'agent:support:main', to, undefined), 'SESSION_EXISTS');
    expect((await inner.load(to.key))?.data).toEqual(sessionOf('support', 'meanwhile'));
  });
});

describe('decodeSessionCheckpoint', () => {
  it('reads a SessionCheckpointV1, keeping unknown top-level fields', () => {
    const data = { ...sessionOf('support'), future: [1] };
    expect(decodeSessionCheckpoint('agent:support:main', data)).toEqual(data);
  });

  it('refuses anything else with CLI_CHECKPOINT_UNSUPPORTED naming the session and the problem', () => {
    const good = sessionOf('support');
    const cases: [unknown, RegExp][] = [
      ['text', /expected an object \{ v, agentId, strategy, history, engine \}, got "text"/],
      [[good], /expected an object/],
      [{ ...good, v: 2 }, /unknown checkpoint format version v=2; this release reads v=1/],
      [{ ...good, agentId: '' }, /agentId "" is not an agent id/],
      [{ ...good, strategy: { state: 'x' } }, /strategy \{"state":"x"\} is not a strategy snapshot/],
      [{ ...good, history: 'hi' }, /history "hi" is not a list of messages/],
      [
        {
          ...good,
          history: [
            { role: 'user', content: 'a' },
            { role: 'robot', content: 'b' },
          ],
        },
        /history\[1\] is \{"role":"robot","content":"b"\}/,
      ],
    ];
    for (const [data, message] of cases) {
      const error = throwsCode(() => decodeSessionCheckpoint('agent:support:x', data), 'CLI_CHECKPOINT_UNSUPPORTED');
      expect(error.message).toMatch(/^cannot read the checkpoint of session "agent:support:x": /);
      expect(error.message).toMatch(message);
    }
  });
});

describe('CliReplayError', () => {
  it('isInstance recognises its own class only', () => {
    const e = new CliReplayError({ code: 'CLI_REPLAY_DIVERGED', message: '1 of 2 sessions diverged or failed' });
    expect(CliReplayError.isInstance(e)).toBe(true);
    expect(SignalyardError.isInstance(e)).toBe(true);
    expect(e.code).toBe('CLI_REPLAY_DIVERGED');
    for (const other of [
      new CliUsageError({ message: 'm' }),
      new SignalyardError({ code: 'X', message: 'm' }),
      new Error('m'),
      null,
    ])
      expect(CliReplayError.isInstance(other)).toBe(false);
  });
});
