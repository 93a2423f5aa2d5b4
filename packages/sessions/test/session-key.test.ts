import { describe, expect, it } from 'vitest';
import {
  MAX_SESSION_KEY_LENGTH,
  MAX_SUBAGENT_DEPTH,
  SessionKey,
  agentIdOf,
  formatSessionKey,
  normalizeAgentId,
  parseSessionKey,
  type DmScope,
} from '@signalyard/sessions';
import { keyError } from './support.js';

const fmt = formatSessionKey;

describe('the key-format table of the source design', () => {
  const rows: [string, SessionKey, string][] = [
    ['Main', SessionKey.main('main'), 'agent:main:main'],
    ['DM (PerPeer)', SessionKey.directMessage('main', 'telegram', 'user123'), 'agent:main:dm:user123'],
    [
      'DM (PerChannelPeer)',
      SessionKey.directMessage('main', 'telegram', 'user123', 'per-channel-peer'),
      'agent:main:telegram:dm:user123',
    ],
    ['Group', SessionKey.group('main', 'discord', 'group', 'guild456'), 'agent:main:discord:group:guild456'],
    [
      'Group (threaded)',
      SessionKey.group('main', 'telegram', 'group', 'chat789', { threadId: 't1' }),
      'agent:main:telegram:group:chat789:thread:t1',
    ],
    ['Task', SessionKey.task('main', 'cron', 'daily-summary'), 'agent:main:cron:daily-summary'],
    ['Subagent', SessionKey.subagent(SessionKey.main('main'), 'coding'), 'agent:main:main:subagent:coding'],
    ['Ephemeral', SessionKey.ephemeral('main', 'abc-123'), 'agent:main:ephemeral:abc-123'],
  ];
  it.each(rows)('%s formats as in the table and parses back', (_name, key, text) => {
    expect(fmt(key)).toBe(text);
    const parsed = parseSessionKey(text);
    if (key.kind === 'direct_message' && key.dmScope === 'per-peer') {
      const { channel: _channel, ...withoutChannel } = key;
      expect(parsed).toStrictEqual(withoutChannel);
    } else {
      expect(parsed).toStrictEqual(key);
    }
  });

  it('a channel-kind and a thread-kind group peer use their kind as the segment', () => {
    expect(fmt(SessionKey.group('main', 'slack', 'channel', 'C1'))).toBe('agent:main:slack:channel:c1');
    expect(fmt(SessionKey.group('main', 'discord', 'thread', 'T9'))).toBe('agent:main:discord:thread:t9');
  });

  it('webhook and scheduled tasks format with their type', () => {
    expect(fmt(SessionKey.task('main', 'webhook', 'github'))).toBe('agent:main:webhook:github');
    expect(fmt(SessionKey.task('main', 'scheduled', 'report'))).toBe('agent:main:scheduled:report');
  });
});

describe('the DM-scope comparison of the source design', () => {
  const cases: [DmScope, string, string, boolean][] = [
    ['main', 'agent:main:main', 'agent:main:main', true],
    ['per-peer', 'agent:main:dm:123', 'agent:main:dm:123', true],
    ['per-channel-peer', 'agent:main:telegram:dm:123', 'agent:main:discord:dm:123', false],
  ];
  it.each(cases)('%s: telegram user 123 → %s, discord user 123 → %s', (scope, telegram, discord, shared) => {
    const t = fmt(SessionKey.directMessage('main', 'telegram', '123', scope));
    const d = fmt(SessionKey.directMessage('main', 'discord', '123', scope));
    expect(t).toBe(telegram);
    expect(d).toBe(discord);
    expect(t === d).toBe(shared);
  });

  it("DM scope 'main' returns the agent's main key itself", () => {
    expect(SessionKey.directMessage('Work', 'telegram', '123', 'main')).toStrictEqual(SessionKey.main('work'));
  });

  it('per-peer is the default scope and keeps the channel on the object, not in the key', () => {
    const key = SessionKey.directMessage('main', 'Telegram', '123');
    expect(key).toStrictEqual({
      kind: 'direct_message',
      agentId: 'main',
      peerId: '123',
      dmScope: 'per-peer',
      channel: 'telegram',
    });
    expect(fmt(key)).toBe('agent:main:dm:123');
  });

  it("DM scope 'main' still rejects a bad channel or an empty peer id", () => {
    keyError(() => SessionKey.directMessage('main', '', '123', 'main'));
    keyError(() => SessionKey.directMessage('main', 'telegram', '  ', 'main'));
  });

  it('an unknown DM scope is an error', () => {
    expect(keyError(() => SessionKey.directMessage('main', 'telegram', '1', 'everyone' as DmScope)).message).toContain(
      '"everyone"',
    );
  });
});

describe('normalizeAgentId', () => {
  it.each([
    [' Work_Bot ', 'work_bot'],
    ['My Agent!', 'my-agent'],
    ['a  b', 'a-b'],
    ['!!!', 'main'],
    ['', 'main'],
    ['---', 'main'],
    ['a'.repeat(70), 'a'.repeat(64)],
    ['Work Bot', 'work-bot'],
    ['--x--', 'x'],
    ['a--b', 'a--b'],
    ['a- -b', 'a---b'],
    ['Ünïcode Agent', 'n-code-agent'],
    ['agent:one', 'agent-one'],
  ])('%j → %j', (input, expected) => {
    expect(normalizeAgentId(input)).toBe(expected);
  });

  it('cuts to 64 characters and strips a trailing dash left by the cut', () => {
    const input = `${'a'.repeat(63)} b`;
    expect(normalizeAgentId(input)).toBe('a'.repeat(63));
  });

  it('is idempotent', () => {
    for (const s of [' Work_Bot ', 'My Agent!', 'x'.repeat(100), '!!!', 'a b c']) {
      expect(normalizeAgentId(normalizeAgentId(s))).toBe(normalizeAgentId(s));
    }
  });
});

describe('factories normalise', () => {
  it("agent ids go through normalizeAgentId: main('Work Bot') is agent:work-bot:main", () => {
    expect(fmt(SessionKey.main('Work Bot'))).toBe('agent:work-bot:main');
  });

  it('channels are trimmed and lowercased', () => {
    expect(SessionKey.group('main', ' Discord ', 'group', 'g')).toMatchObject({ channel: 'discord' });
  });

  it('ids are trimmed and lowercased unless case-sensitive', () => {
    expect(SessionKey.directMessage('main', 'telegram', ' User123 ')).toMatchObject({ peerId: 'user123' });
    expect(
      SessionKey.directMessage('main', 'matrix', ' @Ann:x.org ', 'per-peer', { caseSensitive: true }),
    ).toMatchObject({
      peerId: '@Ann:x.org',
    });
    expect(SessionKey.group('main', 'matrix', 'group', '!Room', { threadId: 'Th', caseSensitive: true })).toMatchObject(
      {
        peerId: '!Room',
        threadId: 'Th',
      },
    );
    expect(SessionKey.group('main', 'slack', 'group', '!Room', { threadId: 'Th' })).toMatchObject({
      peerId: '!room',
      threadId: 'th',
    });
  });

  it('task ids, main keys, subagent ids and ephemeral ids are always lowercased', () => {
    expect(SessionKey.task('main', 'cron', 'Daily')).toMatchObject({ taskId: 'daily' });
    expect(SessionKey.main('main', 'Home')).toMatchObject({ mainKey: 'home' });
    expect(SessionKey.subagent(SessionKey.main('main'), 'Coder')).toMatchObject({ subagentId: 'coder' });
    expect(SessionKey.ephemeral('main', 'ABC')).toMatchObject({ ephemeralId: 'abc' });
  });

  it('every id is NFC-normalised first, so composed and decomposed forms are one session', () => {
    const composed = SessionKey.directMessage('main', 'telegram', 'Jos\u00e9');
    const decomposed = SessionKey.directMessage('main', 'telegram', 'Jose\u0301');
    expect(decomposed).toStrictEqual(composed);
    expect(fmt(decomposed)).toBe('agent:main:dm:jos\u00e9');
    const cs = { caseSensitive: true };
    expect(SessionKey.directMessage('main', 'matrix', '\u00c5sa', 'per-peer', cs)).toStrictEqual(
      SessionKey.directMessage('main', 'matrix', 'A\u030asa', 'per-peer', cs),
    );
  });

  it('keys are frozen', () => {
    expect(Object.isFrozen(SessionKey.main('main'))).toBe(true);
    expect(Object.isFrozen(SessionKey.directMessage('main', 'telegram', '1'))).toBe(true);
    expect(Object.isFrozen(SessionKey.subagent(SessionKey.main('main'), 'x'))).toBe(true);
  });

  it('a group key without a thread has no threadId property', () => {
    expect('threadId' in SessionKey.group('main', 'telegram', 'group', 'g')).toBe(false);
  });
});

describe('factories reject what they cannot key', () => {
  it.each([[''], ['!!!'], ['---'], ['   ']])(
    'agent id %j (nothing valid left) is an error, not a silent "main"',
    (agent) => {
      const error = keyError(() => SessionKey.main(agent));
      expect(error.message).toContain(JSON.stringify(agent));
      keyError(() => SessionKey.directMessage(agent, 'telegram', '1'));
      keyError(() => SessionKey.group(agent, 'telegram', 'group', '1'));
      keyError(() => SessionKey.task(agent, 'cron', '1'));
      keyError(() => SessionKey.ephemeral(agent));
    },
  );

  it.each([[''], ['  '], ['-telegram'], ['tele gram'], ['tele:gram'], ['télégram'], ['*']])(
    'channel %j is an error',
    (channel) => {
      keyError(() => SessionKey.directMessage('main', channel, '1'));
      keyError(() => SessionKey.group('main', channel, 'group', '1'));
    },
  );

  it('empty ids are errors', () => {
    keyError(() => SessionKey.main('main', ''));
    keyError(() => SessionKey.directMessage('main', 'telegram', ''));
    keyError(() => SessionKey.directMessage('main', 'telegram', ' \t '));
    keyError(() => SessionKey.group('main', 'telegram', 'group', ''));
    keyError(() => SessionKey.group('main', 'telegram', 'group', 'g', { threadId: ' ' }));
    keyError(() => SessionKey.task('main', 'cron', ''));
    keyError(() => SessionKey.subagent(SessionKey.main('main'), ''));
    keyError(() => SessionKey.ephemeral('main', ''));
  });

  it('an unknown peer kind is an error', () => {
    expect(keyError(() => SessionKey.group('main', 'telegram', 'dm' as 'group', 'x')).message).toContain('"dm"');
  });

  it('non-string arguments are SessionKeyErrors, not TypeErrors', () => {
    keyError(() => SessionKey.main(42 as unknown as string));
    keyError(() => SessionKey.directMessage('main', null as unknown as string, '1'));
    keyError(() => SessionKey.directMessage('main', 'telegram', { id: 1 } as unknown as string));
  });

  it('ids with lone surrogates are errors (they cannot be stored as UTF-8)', () => {
    keyError(() => SessionKey.directMessage('main', 'telegram', 'a\ud800'));
    keyError(() => SessionKey.directMessage('main', 'telegram', '\udc00b'));
  });

  it('a key over 1,024 characters is an error', () => {
    expect(fmt(SessionKey.directMessage('main', 'telegram', 'x'.repeat(1024 - 'agent:main:dm:'.length))).length).toBe(
      MAX_SESSION_KEY_LENGTH,
    );
    const error = keyError(() =>
      SessionKey.directMessage('main', 'telegram', 'x'.repeat(1024 - 'agent:main:dm:'.length + 1)),
    );
    expect(error.message).toContain('1,025');
    // Escaping counts: 342 ':' take 1,026 characters once escaped.
    keyError(() => SessionKey.directMessage('main', 'telegram', ':'.repeat(342)));
    keyError(() => SessionKey.task('main', 'cron', 'é'.repeat(1020)));
  });
});

describe('subagents', () => {
  it('nest: each level appends :subagent:{id}', () => {
    const a = SessionKey.subagent(SessionKey.directMessage('main', 'telegram', 'u1', 'per-channel-peer'), 'planner');
    const b = SessionKey.subagent(a, 'coder');
    expect(fmt(b)).toBe('agent:main:telegram:dm:u1:subagent:planner:subagent:coder');
    expect(parseSessionKey(fmt(b))).toStrictEqual(b);
  });

  it('8 levels above the root key are valid, a 9th is not', () => {
    let key = SessionKey.main('main');
    for (let i = 1; i <= MAX_SUBAGENT_DEPTH; i++) key = SessionKey.subagent(key, `s${i}`);
    expect(fmt(key).split(':subagent:')).toHaveLength(9);
    expect(parseSessionKey(fmt(key))).toStrictEqual(key);
    const error = keyError(() => SessionKey.subagent(key, 's9'));
    expect(error.message).toContain('9');
  });

  it('a parent that is not a valid key is an error', () => {
    keyError(() => SessionKey.subagent({ kind: 'main', agentId: 'Not Canonical', mainKey: 'main' }, 'x'));
    keyError(() => SessionKey.subagent(null as unknown as SessionKey, 'x'));
  });

  it('a subagent key over the length cap is an error', () => {
    const parent = SessionKey.directMessage('main', 'telegram', 'x'.repeat(1000));
    keyError(() => SessionKey.subagent(parent, 'y'.repeat(20)));
  });
});

describe('ephemeral keys', () => {
  it('default to a random UUID', () => {
    const a = SessionKey.ephemeral('main');
    const b = SessionKey.ephemeral('main');
    if (a.kind !== 'ephemeral' || b.kind !== 'ephemeral') throw new Error('expected ephemeral keys');
    expect(a.ephemeralId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.ephemeralId).not.toBe(b.ephemeralId);
    expect(parseSessionKey(fmt(a))).toStrictEqual(a);
  });
});

describe('agentIdOf', () => {
  it('is the agent of every non-subagent key', () => {
    expect(agentIdOf(SessionKey.main('Work'))).toBe('work');
    expect(agentIdOf(SessionKey.directMessage('a', 'telegram', '1'))).toBe('a');
    expect(agentIdOf(SessionKey.group('b', 'telegram', 'group', '1'))).toBe('b');
    expect(agentIdOf(SessionKey.task('c', 'cron', '1'))).toBe('c');
    expect(agentIdOf(SessionKey.ephemeral('d'))).toBe('d');
  });

  it("of a subagent key is its root parent's agent id", () => {
    let key = SessionKey.task('root-agent', 'cron', 'nightly');
    for (let i = 0; i < 8; i++) key = SessionKey.subagent(key, `level-${i}`);
    expect(agentIdOf(key)).toBe('root-agent');
  });

  it('throws SessionKeyError for something that is not a key', () => {
    keyError(() => agentIdOf({} as SessionKey));
    keyError(() => agentIdOf(null as unknown as SessionKey));
    keyError(() => agentIdOf({ kind: 'subagent', parent: 'x', subagentId: 'y' } as unknown as SessionKey));
  });
});
