import { describe, expect, it } from 'vitest';
import {
  RouteResolver,
  formatSessionKey,
  parseRoutingConfig,
  resolveLinkedPeerId,
  type InboundRoute,
} from '@signalyard/sessions';
import { configProblems, keyError, problemAt } from './support.js';

const dm = (channel: string, id: string): InboundRoute => ({ channel, peer: { kind: 'dm', id } });

describe('identity links across telegram and discord (source example)', () => {
  const config = parseRoutingConfig(`
[routing.session]
dm_scope = "per-peer"

[routing.session.identity_links]
john = ["telegram:123456", "discord:789012", "slack:U345678"]
alice = ["telegram:654321", "imessage:+1234567890"]
`);
  const r = new RouteResolver(config);

  it('Telegram user 123456 and Discord user 789012 share agent:main:dm:john', () => {
    expect(formatSessionKey(r.resolve(dm('telegram', '123456')).sessionKey)).toBe('agent:main:dm:john');
    expect(formatSessionKey(r.resolve(dm('discord', '789012')).sessionKey)).toBe('agent:main:dm:john');
    expect(formatSessionKey(r.resolve(dm('slack', 'u345678')).sessionKey)).toBe('agent:main:dm:john');
    expect(formatSessionKey(r.resolve(dm('imessage', '+1234567890')).sessionKey)).toBe('agent:main:dm:alice');
  });

  it('a link matches only on its own channel: Discord user 123456 is not john', () => {
    expect(formatSessionKey(r.resolve(dm('discord', '123456')).sessionKey)).toBe('agent:main:dm:123456');
    expect(resolveLinkedPeerId(config.session.identityLinks, 'discord', '123456')).toBeUndefined();
  });

  it('links never apply to groups', () => {
    expect(formatSessionKey(r.resolve({ channel: 'telegram', peer: { kind: 'group', id: '123456' } }).sessionKey)).toBe(
      'agent:main:telegram:group:123456',
    );
  });
});

describe('identity links and DM scopes', () => {
  const links = { john: ['telegram:123', 'discord:456'] };

  it('a resolved link gives a per-peer key even under per-channel-peer', () => {
    const r = new RouteResolver({ session: { dmScope: 'per-channel-peer', identityLinks: links } });
    expect(formatSessionKey(r.resolve(dm('telegram', '123')).sessionKey)).toBe('agent:main:dm:john');
    expect(formatSessionKey(r.resolve(dm('discord', '456')).sessionKey)).toBe('agent:main:dm:john');
    expect(r.resolve(dm('discord', '456')).sessionKey).toMatchObject({ dmScope: 'per-peer', channel: 'discord' });
    // Unlinked peers stay per channel.
    expect(formatSessionKey(r.resolve(dm('telegram', '999')).sessionKey)).toBe('agent:main:telegram:dm:999');
  });

  it("links are ignored under dmScope 'main'", () => {
    const r = new RouteResolver({ session: { dmScope: 'main', identityLinks: links } });
    expect(formatSessionKey(r.resolve(dm('telegram', '123')).sessionKey)).toBe('agent:main:main');
  });
});

describe('a Matrix identity link', () => {
  const config = parseRoutingConfig(`
[routing.session]
case_sensitive_channels = ["matrix"]
[routing.session.identity_links]
Alice = ["matrix:@Alice:example.org", "telegram:42"]
`);
  const r = new RouteResolver(config);

  it('splits at the first ":" so the Matrix id keeps its own colon', () => {
    expect(
      resolveLinkedPeerId(config.session.identityLinks, 'matrix', '@Alice:example.org', { caseSensitive: true }),
    ).toBe('alice');
    expect(formatSessionKey(r.resolve(dm('matrix', '@Alice:example.org')).sessionKey)).toBe('agent:main:dm:alice');
    expect(formatSessionKey(r.resolve(dm('telegram', '42')).sessionKey)).toBe('agent:main:dm:alice');
  });

  it('on a case-sensitive channel, a differently-cased Matrix user is somebody else', () => {
    expect(formatSessionKey(r.resolve(dm('matrix', '@alice:example.org')).sessionKey)).toBe(
      'agent:main:dm:@alice%3aexample.org',
    );
    expect(
      resolveLinkedPeerId(config.session.identityLinks, 'matrix', '@alice:example.org', { caseSensitive: true }),
    ).toBeUndefined();
  });
});

describe('resolveLinkedPeerId', () => {
  const links = { John: ['Telegram:ABC', 'discord:456'], ann: ['matrix:@ann:x.org'] };

  it('returns the canonical name, normalised like a peer id', () => {
    expect(resolveLinkedPeerId(links, 'telegram', 'abc')).toBe('john');
    expect(resolveLinkedPeerId(links, ' TELEGRAM ', ' Abc ')).toBe('john');
  });

  it('compares case-insensitively unless the channel is case-sensitive', () => {
    expect(resolveLinkedPeerId(links, 'matrix', '@ANN:x.org')).toBe('ann');
    expect(resolveLinkedPeerId(links, 'matrix', '@ANN:x.org', { caseSensitive: true })).toBeUndefined();
    expect(resolveLinkedPeerId(links, 'matrix', '@ann:x.org', { caseSensitive: true })).toBe('ann');
  });

  it('returns undefined for unknown peers and channels', () => {
    expect(resolveLinkedPeerId(links, 'telegram', '456')).toBeUndefined();
    expect(resolveLinkedPeerId(links, 'irc', 'abc')).toBeUndefined();
    expect(resolveLinkedPeerId({}, 'telegram', 'abc')).toBeUndefined();
  });

  it('throws ConfigError for invalid links: bare entries, duplicates, reserved names', () => {
    expect(
      problemAt(
        configProblems(() => resolveLinkedPeerId({ john: ['123456'] }, 'telegram', '123456')),
        'identityLinks.john[0]',
      ).message,
    ).toContain('no channel');
    configProblems(() => resolveLinkedPeerId({ a: ['telegram:1'], b: ['telegram:1'] }, 'telegram', '1'));
    configProblems(() =>
      resolveLinkedPeerId(JSON.parse('{"__proto__": ["telegram:1"]}') as Record<string, string[]>, 'telegram', '1'),
    );
    configProblems(() => resolveLinkedPeerId({ a: 'telegram:1' } as never, 'telegram', '1'));
  });

  it('throws SessionKeyError for a bad channel or peer id argument', () => {
    keyError(() => resolveLinkedPeerId(links, 'not a channel', '1'));
    keyError(() => resolveLinkedPeerId(links, 'telegram', 1 as unknown as string));
  });
});

describe('identity-link validation', () => {
  it.each([
    ['a bare id', '123456', 'no channel'],
    ['an empty channel', ':123', 'channel name'],
    ['an invalid channel', 'tele gram:1', 'channel name'],
    ['an empty id', 'telegram:', 'empty id'],
    ['a blank id', 'telegram:  ', 'empty id'],
  ])('rejects %s', (_name, entry, message) => {
    const problems = configProblems(() => new RouteResolver({ session: { identityLinks: { john: [entry] } } }));
    expect(problemAt(problems, 'session.identityLinks.john[0]').message).toContain(message);
  });

  it('rejects one channel:id linked to two names (compared after normalisation)', () => {
    const problems = configProblems(
      () =>
        new RouteResolver({
          session: { identityLinks: { john: ['telegram:ABC'], jane: ['discord:1', ' Telegram:abc'] } },
        }),
    );
    expect(problemAt(problems, 'session.identityLinks.jane[1]').message).toContain('already linked to "john"');
  });

  it('on a case-sensitive channel, differently-cased ids are different identities', () => {
    const r = new RouteResolver({
      session: { caseSensitiveChannels: ['matrix'], identityLinks: { a: ['matrix:@X:y'], b: ['matrix:@x:y'] } },
    });
    expect(formatSessionKey(r.resolve(dm('matrix', '@X:y')).sessionKey)).toBe('agent:main:dm:a');
    expect(formatSessionKey(r.resolve(dm('matrix', '@x:y')).sessionKey)).toBe('agent:main:dm:b');
  });

  it('rejects two names that normalise to one person', () => {
    const problems = configProblems(
      () => new RouteResolver({ session: { identityLinks: { John: ['telegram:1'], ' john ': ['discord:2'] } } }),
    );
    expect(problemAt(problems, 'session.identityLinks[" john "]').message).toContain('same person');
  });

  it('rejects blank names and non-list values', () => {
    const problems = configProblems(
      () => new RouteResolver({ session: { identityLinks: { ' ': ['telegram:1'], x: 'telegram:2' as never } } }),
    );
    expect(problemAt(problems, 'session.identityLinks[" "]').message).toContain('empty');
    expect(problemAt(problems, 'session.identityLinks.x').message).toContain('list');
    expect(configProblems(() => new RouteResolver({ session: { identityLinks: [] as never } }))[0]?.message).toContain(
      'table',
    );
    expect(configProblems(() => new RouteResolver({ session: { identityLinks: { x: [7] } as never } }))[0]?.path).toBe(
      'session.identityLinks.x[0]',
    );
  });
});
