// decisions-wave3 §12: everything the CLI prints that came from outside (keys, ids, text) is
// escaped for the terminal. Keys stored by an older release may hold ESC sequences, line breaks
// or U+202E: printed raw they cleared the screen, faked table rows or showed reversed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionCheckpointV1 } from '@signalyard/core';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { terminalJson, terminalText } from '../src/cli-io.js';
import { sessionOf } from './session-fixtures.js';
import { lines, runInProcess } from './support.js';

const ESC_CLEAR = '\u001b[2J\u001b[H';
const RLO = '\u202e';
/** The characters a terminal acts on; none may reach it from stored data. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('terminalText', () => {
  it('shows ESC sequences, line breaks, C1 controls and bidirectional controls as visible escapes', () => {
    expect(terminalText(`a${ESC_CLEAR}b`)).toBe('a\\x1b[2J\\x1b[Hb');
    expect(terminalText('row\nfake row\r\tx')).toBe('row\\nfake row\\r\\tx');
    expect(terminalText(`user${RLO}gpj.exe`)).toBe('user\\u202egpj.exe');
    expect(terminalText('\u0000\u0007\u007f\u0085\u009b\u061c\u200f\u2028\u2066')).toBe(
      '\\x00\\x07\\x7f\\x85\\x9b\\u061c\\u200f\\u2028\\u2066',
    );
  });

  it('leaves printable text as it is (a key of this release prints exactly), and returns it unchanged', () => {
    const key = 'agent:main:telegram:dm:émigré%3a😀\\x1b';
    expect(terminalText(key)).toBe(key);
    expect(terminalText('')).toBe('');
  });

  it('terminalJson writes the same JSON value, with nothing a terminal acts on left raw', () => {
    const value = { key: `a${ESC_CLEAR}\n${RLO}\u0085\u2028`, n: 1, nested: [{ t: '\u2066x' }] };
    for (const space of [undefined, 2]) {
      const text = terminalJson(value, space);
      expect(JSON.parse(text)).toEqual(value);
      expect(RAW_UNSAFE.test(text)).toBe(false);
    }
    expect(terminalJson({ k: RLO })).toBe('{"k":"\\u202e"}');
  });
});

describe('signalyard sessions, over keys and text an older release stored', () => {
  const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-terminal-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const hostileKey = `agent:main:dm:eve${ESC_CLEAR}\nagent:main:dm:admin  main  9${RLO}`;
  const hostileAgent = `main${ESC_CLEAR}`;

  /** A store holding one hostile session and one ordinary one, written straight into the file. */
  async function database(): Promise<string> {
    const file = join(dir, `hostile-${Math.random().toString(36).slice(2)}.db`);
    const store = new SqliteCheckpointStore({ path: file });
    const data: SessionCheckpointV1 = {
      ...sessionOf(hostileAgent, `hello ${ESC_CLEAR}${RLO}dlrow`),
      cause: {
        at: '2025-03-01T09:00:00.000Z',
        signal: { kind: 'user_message', text: `hi${RLO}` },
        status: `completed\u001b[31m` as 'completed',
        tier: 'agent',
        routeName: `route\n${RLO}`,
      },
    };
    await store.save(hostileKey, data, 0);
    await store.save('agent:main:main', sessionOf('main', 'plain'), 0);
    await store.close();
    return `sqlite:${file}`;
  }

  it('list prints each stored key and agent on its own row, escaped', async () => {
    const url = await database();
    const result = await runInProcess(['sessions', 'list', '--store', url], { cwd: dir });
    expect(result.code).toBe(0);
    expect(RAW_UNSAFE.test(result.stdout)).toBe(false);
    const rows = lines(result.stdout);
    expect(rows).toHaveLength(3); // the header and two sessions: no row faked by a line break
    expect(rows[1]).toContain(terminalText(hostileKey));
    expect(rows[1]).toContain('agent:main:dm:eve\\x1b[2J\\x1b[H\\nagent:main:dm:admin  main  9\\u202e');
    expect(rows[1]).toContain('main\\x1b[2J\\x1b[H');
    expect(rows[2]).toMatch(/^agent:main:main /);
  });

  it('list --json prints JSON that parses back to the stored key, with nothing raw', async () => {
    const url = await database();
    const result = await runInProcess(['sessions', 'list', '--store', url, '--json'], { cwd: dir });
    expect(RAW_UNSAFE.test(result.stdout)).toBe(false);
    const listed = lines(result.stdout).map((l) => JSON.parse(l) as { sessionKey: string; agentId: string });
    expect(listed.map((s) => s.sessionKey)).toEqual([hostileKey, 'agent:main:main']);
    expect(listed[0]?.agentId).toBe(hostileAgent);
  });

  it('show and history print the stored text, cause and route escaped', async () => {
    const url = await database();
    // The hostile key cannot be named on the command line any more (it is not a session key):
    // `show` reads a session whose data holds the hostile text through an ordinary key.
    const file = url.slice('sqlite:'.length);
    const store = new SqliteCheckpointStore({ path: file });
    const hostile = await store.load(hostileKey);
    await store.save('agent:main:dm:eve', hostile?.data, 0);
    await store.close();
    for (const args of [
      ['sessions', 'show', 'agent:main:dm:eve', '--store', url],
      ['sessions', 'history', 'agent:main:dm:eve', '--store', url],
      ['sessions', 'show', 'agent:main:dm:eve', '--store', url, '--json'],
      ['sessions', 'history', 'agent:main:dm:eve', '--store', url, '--json'],
    ]) {
      const result = await runInProcess(args, { cwd: dir });
      expect(result.code, args.join(' ')).toBe(0);
      expect(RAW_UNSAFE.test(result.stdout), args.join(' ')).toBe(false);
    }
    const show = await runInProcess(['sessions', 'show', 'agent:main:dm:eve', '--store', url], { cwd: dir });
    expect(show.stdout).toContain('agent: main\\x1b[2J\\x1b[H');
    expect(show.stdout).toContain('user: hello \\x1b[2J\\x1b[H\\u202edlrow');
    expect(show.stdout).toContain('agent/route \\u202e');
    expect(show.stdout).toContain('completed\\x1b[31m');
  });

  it('a key with a control character given on the command line is refused as not a session key', async () => {
    const url = await database();
    const result = await runInProcess(['sessions', 'show', `agent:main:dm:eve${RLO}`, '--store', url], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('U+202E');
    expect(result.stderr).not.toContain(RLO);
  });
});
