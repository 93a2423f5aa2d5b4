import { describe, expect, it } from 'vitest';
import { SessionKey, formatSessionKey, parseSessionKey } from '@signalyard/sessions';
import { keyError } from './support.js';

const fmt = formatSessionKey;
const cs = { caseSensitive: true };

describe('escaping', () => {
  it('escapes % as %25 and : as %3a, so the only : in a key are delimiters', () => {
    const key = SessionKey.directMessage('main', 'matrix', '@alice:example.org%20', 'per-channel-peer');
    expect(fmt(key)).toBe('agent:main:matrix:dm:@alice%3aexample.org%2520');
    expect(parseSessionKey(fmt(key))).toStrictEqual(key);
  });

  it('escapes every character that lowercasing would change, as UTF-8 bytes in lowercase hex', () => {
    expect(fmt(SessionKey.directMessage('main', 'matrix', 'AbC', 'per-peer', cs))).toBe('agent:main:dm:%41b%43');
    expect(fmt(SessionKey.directMessage('main', 'matrix', '\u00c9', 'per-peer', cs))).toBe('agent:main:dm:%c3%89'); // É
    expect(fmt(SessionKey.directMessage('main', 'matrix', '\u0130', 'per-peer', cs))).toBe('agent:main:dm:%c4%b0'); // İ
    expect(fmt(SessionKey.directMessage('main', 'matrix', '\u{10400}', 'per-peer', cs))).toBe(
      'agent:main:dm:%f0%90%90%80',
    ); // 𐐀
  });

  it('a formatted key is all-lowercase', () => {
    const key = fmt(
      SessionKey.group('main', 'matrix', 'group', '!RoomΣ:Server', { threadId: 'ThreadÉ', caseSensitive: true }),
    );
    expect(key).toBe(key.toLowerCase());
  });

  it('characters that lowercasing leaves alone are not escaped', () => {
    expect(fmt(SessionKey.directMessage('main', 'telegram', 'josé ünïcode 你好 🙂'))).toBe(
      'agent:main:dm:josé ünïcode 你好 🙂',
    );
  });

  it('case-preserving escapes: AbC and abc are different keys on a case-sensitive channel', () => {
    const upper = SessionKey.directMessage('main', 'matrix', 'AbC', 'per-channel-peer', cs);
    const lower = SessionKey.directMessage('main', 'matrix', 'abc', 'per-channel-peer', cs);
    expect(fmt(upper)).not.toBe(fmt(lower));
    expect(parseSessionKey(fmt(upper))).toMatchObject({ peerId: 'AbC' });
  });
});

describe('parseSessionKey', () => {
  it('trims and lowercases before parsing', () => {
    expect(parseSessionKey('  AGENT:Main:Telegram:DM:User123 \n')).toStrictEqual(
      SessionKey.directMessage('main', 'telegram', 'user123', 'per-channel-peer'),
    );
  });

  it('parses escaped hex in either case (the text is lowercased first)', () => {
    expect(parseSessionKey('agent:main:dm:%41B%43')).toMatchObject({ peerId: 'AbC' });
    expect(parseSessionKey('agent:main:dm:a%3Ab')).toMatchObject({ peerId: 'a:b' });
  });

  it('a per-peer DM parses without a channel', () => {
    expect(parseSessionKey('agent:main:dm:123')).toStrictEqual({
      kind: 'direct_message',
      agentId: 'main',
      peerId: '123',
      dmScope: 'per-peer',
    });
  });

  it('returns frozen keys, subagent parents included', () => {
    const key = parseSessionKey('agent:main:main:subagent:a:subagent:b');
    expect(Object.isFrozen(key)).toBe(true);
    if (key.kind !== 'subagent') throw new Error('expected a subagent key');
    expect(Object.isFrozen(key.parent)).toBe(true);
  });

  it('resolves keys whose ids look like keywords', () => {
    expect(parseSessionKey('agent:main:dm')).toStrictEqual(SessionKey.main('main', 'dm'));
    expect(parseSessionKey('agent:main:cron')).toStrictEqual(SessionKey.main('main', 'cron'));
    expect(parseSessionKey('agent:subagent:main')).toStrictEqual(SessionKey.main('subagent'));
    expect(parseSessionKey('agent:main:dm:subagent')).toStrictEqual({
      kind: 'direct_message',
      agentId: 'main',
      peerId: 'subagent',
      dmScope: 'per-peer',
    });
    expect(parseSessionKey('agent:main:dm:subagent:x')).toStrictEqual(
      SessionKey.subagent(SessionKey.main('main', 'dm'), 'x'),
    );
    expect(parseSessionKey('agent:main:subagent:subagent:subagent')).toStrictEqual(
      SessionKey.subagent(SessionKey.main('main', 'subagent'), 'subagent'),
    );
    expect(parseSessionKey('agent:main:thread:thread:thread')).toStrictEqual(
      SessionKey.group('main', 'thread', 'thread', 'thread'),
    );
    expect(parseSessionKey('agent:main:dm:dm:dm')).toStrictEqual(
      SessionKey.directMessage('main', 'dm', 'dm', 'per-channel-peer'),
    );
  });

  describe('rejects, naming the problem', () => {
    const cases: [string, string, string][] = [
      ['empty', '', 'empty key'],
      ['blank', '   ', 'empty key'],
      ['wrong prefix', 'agnt:main:main', 'wrong prefix'],
      ['no prefix', 'main', 'wrong prefix'],
      ['too few segments', 'agent:main', 'segments'],
      ['empty agent segment', 'agent::main', 'empty segment 2'],
      ['empty middle segment', 'agent:main::dm:x', 'empty segment 3'],
      ['trailing colon', 'agent:main:main:', 'empty segment 4'],
      ['non-canonical agent', 'agent:work bot:main', 'not canonical'],
      ['agent with dash at the end', 'agent:work-:main', 'not canonical'],
      ['unknown task type', 'agent:main:daily:x', 'unknown key type "daily"'],
      ['another unknown task type', 'agent:main:hourly:job', 'unknown key type "hourly"'],
      ['unknown peer kind', 'agent:main:telegram:room:x', 'unknown peer kind "room"'],
      ['bad channel', 'agent:main:-telegram:group:x', 'channel'],
      ['dangling subagent', 'agent:main:main:subagent', 'dangling "subagent"'],
      ['dangling subagent with colon', 'agent:main:main:subagent:', 'dangling "subagent"'],
      ['dangling subagent after a DM', 'agent:main:dm:u:subagent', 'dangling "subagent"'],
      ['six segments without subagent', 'agent:main:telegram:group:x:y', '6 segments'],
      ['seven segments without thread', 'agent:main:telegram:group:x:topic:y', 'expected "thread"'],
      ['too many segments', 'agent:main:telegram:group:x:thread:y:z', '8 segments'],
      ['unnecessary escape of a letter', 'agent:main:dm:%61', 'unnecessary escape "%61"'],
      ['unnecessary escape of a space', 'agent:main:dm:a%20b', 'unnecessary escape'],
      ['unnecessary escape of a lowercase non-ASCII letter', 'agent:main:dm:%c3%a9', 'unnecessary escape'],
      ['escape with one hex digit', 'agent:main:dm:a%3', 'bad escape'],
      ['escape with a non-hex digit', 'agent:main:dm:a%zz', 'bad escape'],
      ['lone continuation byte', 'agent:main:dm:%89', 'bad escape'],
      ['truncated UTF-8 sequence', 'agent:main:dm:%c3', 'truncated'],
      ['overlong UTF-8', 'agent:main:dm:%c1%81', 'bad escape'],
      ['overlong 3-byte UTF-8', 'agent:main:dm:%e0%81%81', 'invalid UTF-8'],
      ['encoded surrogate', 'agent:main:dm:%ed%a0%80', 'invalid UTF-8'],
      ['uppercase in a task id', 'agent:main:cron:%41', 'not in canonical form'],
      ['uppercase in a main key', 'agent:main:%41', 'not in canonical form'],
      ['uppercase in a subagent id', 'agent:main:main:subagent:%41', 'not in canonical form'],
      ['uppercase in an ephemeral id', 'agent:main:ephemeral:%41', 'not in canonical form'],
      ['untrimmed id', 'agent:main:dm: x', 'not in canonical form'],
      ['decomposed (NFD) id', 'agent:main:dm:e\u0301', 'not in canonical form'],
      ['lone surrogate', 'agent:main:dm:a\ud800', 'not in canonical form'],
      ['lone surrogate next to an escape', 'agent:main:dm:%41\udc00', 'not in canonical form'],
      ['nine subagent levels', `agent:main:main${':subagent:s'.repeat(9)}`, '9 levels'],
      ['over 1,024 characters', `agent:main:dm:${'x'.repeat(1011)}`, '1,025 characters'],
    ];
    it.each(cases)('%s: %j', (_name, text, problem) => {
      const error = keyError(() => parseSessionKey(text));
      expect(error.message).toContain(problem);
      expect(error.input).toBe(text);
    });

    it('non-strings', () => {
      for (const value of [undefined, null, 42, {}, ['agent', 'main', 'main']]) {
        const error = keyError(() => parseSessionKey(value as never));
        expect(error.problem).toBe('not a string');
      }
    });
  });
});

describe('formatSessionKey rejects malformed key objects', () => {
  const bad: [string, unknown][] = [
    ['null', null],
    ['a string', 'agent:main:main'],
    ['unknown kind', { kind: 'room', agentId: 'main' }],
    ['non-canonical agent', { kind: 'main', agentId: 'Main', mainKey: 'main' }],
    ['empty main key', { kind: 'main', agentId: 'main', mainKey: '' }],
    ['uppercase main key', { kind: 'main', agentId: 'main', mainKey: 'Main' }],
    ['untrimmed peer', { kind: 'direct_message', agentId: 'main', peerId: ' x', dmScope: 'per-peer' }],
    ['NFD peer', { kind: 'direct_message', agentId: 'main', peerId: 'e\u0301', dmScope: 'per-peer' }],
    ['dm scope main', { kind: 'direct_message', agentId: 'main', peerId: 'x', dmScope: 'main' }],
    [
      'per-channel DM without channel',
      { kind: 'direct_message', agentId: 'main', peerId: 'x', dmScope: 'per-channel-peer' },
    ],
    [
      'per-peer DM with a bad channel',
      { kind: 'direct_message', agentId: 'main', peerId: 'x', dmScope: 'per-peer', channel: 'A B' },
    ],
    ['group with bad kind', { kind: 'group', agentId: 'main', channel: 'telegram', peerKind: 'dm', peerId: 'x' }],
    [
      'group with empty thread',
      { kind: 'group', agentId: 'main', channel: 'telegram', peerKind: 'group', peerId: 'x', threadId: '' },
    ],
    ['task of type dm', { kind: 'task', agentId: 'main', taskType: 'dm', taskId: 'x' }],
    ['subagent of nothing', { kind: 'subagent', parent: undefined, subagentId: 'x' }],
    ['ephemeral with number id', { kind: 'ephemeral', agentId: 'main', ephemeralId: 7 }],
  ];
  it.each(bad)('%s', (_name, key) => {
    keyError(() => formatSessionKey(key as SessionKey));
  });

  it('nine levels of subagents built by hand', () => {
    let key: SessionKey = SessionKey.main('main');
    for (let i = 0; i < 9; i++) key = { kind: 'subagent', parent: key, subagentId: `s${i}` };
    expect(keyError(() => formatSessionKey(key)).message).toContain('more than 8 levels');
  });

  it('a hand-built key over 1,024 characters', () => {
    const key: SessionKey = { kind: 'direct_message', agentId: 'main', peerId: 'x'.repeat(2000), dmScope: 'per-peer' };
    expect(keyError(() => formatSessionKey(key)).message).toContain('1,024');
  });

  it('accepts a valid hand-built key', () => {
    expect(formatSessionKey({ kind: 'task', agentId: 'main', taskType: 'cron', taskId: 'x' })).toBe(
      'agent:main:cron:x',
    );
  });
});
