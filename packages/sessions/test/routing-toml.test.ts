import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  RouteResolver,
  formatSessionKey,
  loadRoutingConfig,
  parseRoutingConfig,
  type InboundRoute,
  type MatchedBy,
} from '@signalyard/sessions';
import { configProblems, problemAt, rejection, thrown } from './support.js';

// The TOML of the contract (design/sessions.md), verbatim.
const CONTRACT_TOML = `[routing]
default_agent = "main"                        # optional, default "main"

[routing.session]
dm_scope = "per-peer"                         # main | per-peer | per-channel-peer
case_sensitive_channels = ["matrix"]          # optional

[routing.session.identity_links]
john = ["telegram:123456", "discord:789012"]

[[routing.bindings]]
agent_id = "vip-agent"
[routing.bindings.match]
channel = "telegram"                          # optional; "*" or omitted = any
account_id = "*"                              # optional; "*" or omitted = any
guild_id = "G1"                               # optional
team_id = "T12345"                            # optional
[routing.bindings.match.peer]                 # optional
kind = "dm"                                   # dm | group | channel | thread
id = "user-vip"
`;

describe('parseRoutingConfig', () => {
  it('parses the layout of the contract into the code form', () => {
    expect(parseRoutingConfig(CONTRACT_TOML)).toStrictEqual({
      defaultAgentId: 'main',
      session: {
        dmScope: 'per-peer',
        identityLinks: { john: ['telegram:123456', 'discord:789012'] },
        caseSensitiveChannels: ['matrix'],
      },
      bindings: [
        {
          agentId: 'vip-agent',
          match: {
            channel: 'telegram',
            accountId: '*',
            guildId: 'G1',
            teamId: 'T12345',
            peer: { kind: 'dm', id: 'user-vip' },
          },
        },
      ],
    });
  });

  it('fills every default', () => {
    expect(parseRoutingConfig('[routing]\n')).toStrictEqual({
      defaultAgentId: 'main',
      session: { dmScope: 'per-peer', identityLinks: {}, caseSensitiveChannels: [] },
      bindings: [],
    });
  });

  it('accepts inline tables, dotted keys and arrays of inline tables', () => {
    const config = parseRoutingConfig(`
routing.default_agent = "home"
routing.session = { dm_scope = "per-channel-peer" }
routing.bindings = [
  { agent_id = "a", match = { channel = "telegram", peer = { kind = "dm", id = "1" } } },
  { agent_id = "b", match.channel = "discord" },
]
`);
    expect(config.defaultAgentId).toBe('home');
    expect(config.session.dmScope).toBe('per-channel-peer');
    expect(config.bindings.map((b) => b.agentId)).toStrictEqual(['a', 'b']);
  });

  it('skips a UTF-8 byte-order mark', () => {
    expect(parseRoutingConfig('\uFEFF[routing]\ndefault_agent = "x"\n').defaultAgentId).toBe('x');
  });

  it('reports a TOML syntax error with the parser line and column', () => {
    const error = thrown(() => parseRoutingConfig('[routing]\ndefault_agent = "main"\ndm_scope = = 1\n'));
    expect(ConfigError.isInstance(error)).toBe(true);
    const problem = (error as ConfigError).problems[0]!;
    expect(problem.line).toBe(3);
    expect(problem.column).toBeGreaterThan(0);
    expect(problem.message).toContain('TOML syntax error');
    expect(problem.message).not.toContain('\n');
  });

  it('an unterminated string is reported as one, at the line where it opens', () => {
    for (const [toml, line] of [
      ['[routing]\ndefault_agent = "main\n', 2],
      ['[routing]\ndefault_agent = "main\r\ndm_scope = "main"\r\n', 2],
      ["[routing]\ndefault_agent = 'main\n[routing.session]\n", 2],
      ['[routing]\ndefault_agent = "main', 2],
      ['[routing]\ndefault_agent = """main\n\n', 2],
    ] as const) {
      const [problem] = configProblems(() => parseRoutingConfig(toml));
      expect(problem?.message, toml).toMatch(/^TOML syntax error: unterminated string: the string opened on this line/);
      expect(problem?.line, toml).toBe(line);
    }
  });

  it('an error found where the text ends is reported on the last line with text, never past the end', () => {
    for (const toml of [
      '[routing]\ndefault_agent = ["a",\n',
      '[routing]\ndefault_agent = ["a",',
      '[routing]\ndefault_agent = ["a",\r\n\n  \n',
    ]) {
      const [problem] = configProblems(() => parseRoutingConfig(toml));
      expect(problem?.message, toml).toMatch(/^TOML syntax error: /);
      expect(problem?.line, toml).toBe(2);
      // Within line 2: at most one past its last character.
      expect(problem?.column, toml).toBeGreaterThan(0);
      expect(problem?.column, toml).toBeLessThanOrEqual('default_agent = ["a",'.length + 1);
    }
  });

  it("a control character inside a closed string keeps the parser's message", () => {
    const [problem] = configProblems(() => parseRoutingConfig('[routing]\ndefault_agent = "ma\u0001in"\n'));
    expect(problem?.message).toBe('TOML syntax error: control characters are not allowed in strings');
  });

  it('a key written twice is a syntax error with its line', () => {
    const [problem] = configProblems(() => parseRoutingConfig('[routing]\ndefault_agent = "a"\ndefault_agent = "b"\n'));
    expect(problem?.line).toBe(3);
  });

  it('reads a document without a [routing] table as the default configuration, and rejects other top-level keys', () => {
    expect(parseRoutingConfig('')).toEqual({
      defaultAgentId: 'main',
      session: { dmScope: 'per-peer', identityLinks: {}, caseSensitiveChannels: [] },
      bindings: [],
    });
    expect(parseRoutingConfig('# only a comment\n').bindings).toEqual([]);
    const problems = configProblems(() => parseRoutingConfig('title = "x"\n[routing]\n[server]\nport = 1\n'));
    expect(problemAt(problems, 'title').line).toBe(1);
    expect(problemAt(problems, 'server').line).toBe(3);
  });

  it('rejects non-string input with a ConfigError', () => {
    configProblems(() => parseRoutingConfig(undefined as unknown as string));
  });
});

describe('every problem at once, each with its path and line', () => {
  const TOML = `[routing]
default_agent = "Main Agent"
defualt_agent = "main"

[routing.session]
dm_scope = "per-person"
case_sensitive_channels = ["matrix", "not a channel"]

[routing.session.identity_links]
john = ["telegram:123", "123456"]
jane = ["Telegram:123"]

[[routing.bindings]]
agent_id = "Support Bot"
[routing.bindings.match]
channel = "whatsapp"
acount_id = "*"

[[routing.bindings]]
agent_id = "vip"
[routing.bindings.match.peer]
kind = "dm"
id = "user-vip"

[[routing.bindings]]
agent_id = "x"
[routing.bindings.match]
channel = "slack"
[routing.bindings.match.peer]
id = "U1"

[[routing.bindings]]
agent_id = "y"
[routing.bindings.match]
channel = "slack"
[routing.bindings.match.peer]
kind = "person"

[[routing.bindings]]
agent_id = "tg"
[routing.bindings.match]
channel = "telegram"

[[routing.bindings]]
agent_id = "tg-again"
[routing.bindings.match]
channel = " Telegram "
account_id = "*"

[[routing.bindings]]
agent_id = 7
match = "slack"
`;
  const problems = configProblems(() => parseRoutingConfig(TOML));
  const expected: [string, number, string][] = [
    ['routing.default_agent', 2, 'not canonical: write "main-agent"'],
    ['routing.defualt_agent', 3, 'unknown key "defualt_agent"'],
    ['routing.session.dm_scope', 6, '"per-person"'],
    ['routing.session.case_sensitive_channels[1]', 7, '"not a channel"'],
    ['routing.session.identity_links.john[1]', 10, 'no channel'],
    ['routing.session.identity_links.jane[0]', 11, 'already linked to "john"'],
    ['routing.bindings[0].agent_id', 14, 'not canonical: write "support-bot"'],
    ['routing.bindings[0].match.acount_id', 17, 'unknown key "acount_id"'],
    ['routing.bindings[1].match.channel', 21, 'needs a channel'],
    ['routing.bindings[2].match.peer.kind', 29, 'needs a kind'],
    ['routing.bindings[3].match.peer.kind', 37, '"person"'],
    ['routing.bindings[3].match.peer.id', 36, 'required'],
    ['routing.bindings[5]', 44, 'can never win: bindings[4]'],
    ['routing.bindings[6].agent_id', 51, 'expected string'],
    ['routing.bindings[6].match', 52, 'expected a table'],
  ];
  it.each(expected)('%s (line %i)', (path, line, message) => {
    const problem = problemAt(problems, path);
    expect(problem.line).toBe(line);
    expect(problem.message).toContain(message);
  });

  it('nothing else, in document order', () => {
    expect(problems).toHaveLength(expected.length);
    const lines = problems.map((p) => p.line ?? 0);
    expect(lines).toStrictEqual([...lines].sort((a, b) => a - b));
  });

  it('the message lists them one per line with their line numbers', () => {
    const error = thrown(() => parseRoutingConfig(TOML)) as ConfigError;
    expect(error.message).toContain('Invalid configuration (15 problems)');
    expect(error.message).toContain('17: routing.bindings[0].match.acount_id: unknown key "acount_id"');
  });
});

describe('lines inside inline tables, dotted keys and multi-line values', () => {
  it('points at the line of the offending key', () => {
    const problems = configProblems(() =>
      parseRoutingConfig(`[routing]
session.dm_scope = "nope"
bindings = [
  { agent_id = "a", match = { channel = "telegram" } },
  { agent_id = "b", match = {
      channel = "telegram",
      colour = "red" } },
]
[routing.session.identity_links]
"john doe" = [
  "telegram:1",
  """bare""",
]
`),
    );
    expect(problemAt(problems, 'routing.session.dm_scope').line).toBe(2);
    expect(problemAt(problems, 'routing.bindings[1].match.colour').line).toBe(7);
    expect(problemAt(problems, 'routing.session.identity_links["john doe"][1]').line).toBe(12);
  });

  it('handles quoted keys, literal strings and comments', () => {
    const problems = configProblems(() =>
      parseRoutingConfig(`# comment with [brackets] and "quotes"
[routing] # trailing comment
'default_agent' = 'A B' # literal string
"session" = { "dm_scope" = 'x' }
`),
    );
    expect(problemAt(problems, 'routing.default_agent').line).toBe(3);
    expect(problemAt(problems, 'routing.session.dm_scope').line).toBe(4);
  });
});

describe('line numbers after multi-line strings and escaped keys', () => {
  it('counts the lines inside multi-line strings and understands escapes in quoted keys', () => {
    const problems = configProblems(() =>
      parseRoutingConfig(`[routing.session.identity_links]
"jo\\u0068n \\"j\\"" = ["telegram:1"]
ann = ["""telegram:2""", '''discord:
3''', "telegram:\\t4"]
bob = [
  # a comment inside an array
  'literal:5',
  "x\\\\y",
]
[routing]
default_agent = """
multi
line \\
"""
`),
    );
    expect(problemAt(problems, 'routing.session.identity_links.bob[1]').line).toBe(8);
    expect(problemAt(problems, 'routing.default_agent').line).toBe(11);
  });

  it('finds keys written with a quoted dotted path and inline tables spanning lines', () => {
    const problems = configProblems(() =>
      parseRoutingConfig(`[routing]
"bindings" = [
  {
    agent_id = "a",
    match = { "channel" = "telegram", peer = { kind = "dm", id = "u" }, extra = 1 },
  },
]
`),
    );
    expect(problemAt(problems, 'routing.bindings[0].match.extra').line).toBe(5);
  });
});

describe('__proto__ and constructor never reach objects', () => {
  it('as keys anywhere in the layout they are unknown keys, with lines', () => {
    const problems = configProblems(() =>
      parseRoutingConfig(`[routing]
__proto__ = { polluted = true }
constructor = "x"
[routing.session]
"__proto__" = 1
[[routing.bindings]]
agent_id = "a"
constructor.prototype.polluted = true
[routing.bindings.match]
channel = "telegram"
__proto__.polluted = true
`),
    );
    expect(problemAt(problems, 'routing.__proto__').line).toBe(2);
    expect(problemAt(problems, 'routing.constructor').line).toBe(3);
    expect(problemAt(problems, 'routing.session.__proto__').line).toBe(5);
    expect(problemAt(problems, 'routing.bindings[0].constructor').line).toBe(8);
    expect(problemAt(problems, 'routing.bindings[0].match.__proto__').line).toBe(11);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('as identity-link names they are reserved names', () => {
    const problems = configProblems(() =>
      parseRoutingConfig(`[routing.session.identity_links]
__proto__ = ["telegram:1"]
constructor = ["telegram:2"]
john = ["telegram:3"]
`),
    );
    expect(problemAt(problems, 'routing.session.identity_links.__proto__').message).toContain('reserved');
    expect(problemAt(problems, 'routing.session.identity_links.__proto__').line).toBe(2);
    expect(problemAt(problems, 'routing.session.identity_links.constructor').line).toBe(3);
    expect(problems).toHaveLength(2);
  });

  it('as a top-level table they are unknown keys', () => {
    expect(
      problemAt(
        configProblems(() => parseRoutingConfig('[routing]\n[__proto__]\nx = 1\n')),
        '__proto__',
      ).line,
    ).toBe(2);
  });

  it('as values (ids) they are ordinary ids', () => {
    const config = parseRoutingConfig(`[routing.session.identity_links]
john = ["telegram:__proto__", "discord:constructor"]
[[routing.bindings]]
agent_id = "a"
[routing.bindings.match]
channel = "telegram"
[routing.bindings.match.peer]
kind = "dm"
id = "constructor"
`);
    const r = new RouteResolver(config);
    expect(r.resolve({ channel: 'telegram', peer: { kind: 'dm', id: 'constructor' } }).agentId).toBe('a');
    expect(formatSessionKey(r.resolve({ channel: 'telegram', peer: { kind: 'dm', id: '__proto__' } }).sessionKey)).toBe(
      'agent:main:dm:john',
    );
  });
});

describe('loadRoutingConfig', () => {
  it('reads and parses a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'signalyard-routing-'));
    const file = join(dir, 'routing.toml');
    await writeFile(file, CONTRACT_TOML);
    expect((await loadRoutingConfig(file)).bindings[0]?.agentId).toBe('vip-agent');
  });

  it('names the file in its ConfigError', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'signalyard-routing-'));
    const file = join(dir, 'bad.toml');
    await writeFile(file, '[routing]\ndefault_agent = "Nope Nope"\n');
    const error = await rejection(loadRoutingConfig(file));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).file).toBe(file);
    expect((error as ConfigError).message).toContain(`${file}:2: routing.default_agent`);
  });

  it('a missing file is a ConfigError with the cause', async () => {
    const error = await rejection(loadRoutingConfig(join(tmpdir(), 'does-not-exist-signalyard.toml')));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).message).toContain('cannot read');
    expect((error as ConfigError).cause).toBeInstanceOf(Error);
  });

  it('reads a file: URL, and names its path in a ConfigError', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'signalyard-routing-'));
    const good = join(dir, 'routing.toml');
    const bad = join(dir, 'bad file.toml');
    await writeFile(good, CONTRACT_TOML);
    await writeFile(bad, '[routing]\ndefault_agent = "Nope Nope"\n');
    expect((await loadRoutingConfig(pathToFileURL(good))).bindings[0]?.agentId).toBe('vip-agent');
    const error = await rejection(loadRoutingConfig(pathToFileURL(bad)));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).file).toBe(bad);
  });

  it.each([
    ['a number (never read as a file descriptor)', 0, '0'],
    ['null', null, 'null'],
    ['an empty path', '', '""'],
    ['an http: URL', new URL('http://example.com/routing.toml'), '"http://example.com/routing.toml"'],
  ])('refuses %s with a ConfigError naming the value', async (_label, value, shown) => {
    const error = await rejection(loadRoutingConfig(value as string));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    expect((error as ConfigError).message).toContain(`Invalid path ${shown} for a routing TOML file`);
    expect((error as ConfigError).problems).toEqual([{ path: '', message: expect.stringContaining(shown) as string }]);
  });
});

describe('the example in examples/routing/routing.toml', () => {
  const file = fileURLToPath(new URL('../../../examples/routing/routing.toml', import.meta.url));
  const rows: [string, InboundRoute, string, MatchedBy, string][] = [
    [
      'VIP DM',
      { channel: 'telegram', peer: { kind: 'dm', id: 'user-vip' } },
      'vip-agent',
      'peer',
      'agent:vip-agent:dm:user-vip',
    ],
    [
      'eng thread',
      { channel: 'telegram', peer: { kind: 'group', id: 'eng-chat' }, threadId: '42' },
      'eng',
      'peer',
      'agent:eng:telegram:group:eng-chat:thread:42',
    ],
    [
      'guild',
      { channel: 'discord', guildId: 'G1', peer: { kind: 'group', id: 'lobby' } },
      'community',
      'guild',
      'agent:community:discord:group:lobby',
    ],
    [
      'workspace',
      { channel: 'slack', teamId: 'T12345', peer: { kind: 'dm', id: 'U345678' } },
      'work',
      'team',
      'agent:work:dm:john',
    ],
    [
      'support bot',
      { channel: 'telegram', accountId: 'support-bot', peer: { kind: 'dm', id: '77' } },
      'support',
      'account',
      'agent:support:dm:77',
    ],
    [
      'telegram DM',
      { channel: 'telegram', peer: { kind: 'dm', id: '123456' } },
      'general',
      'channel',
      'agent:general:dm:john',
    ],
    [
      'matrix alice',
      { channel: 'matrix', peer: { kind: 'dm', id: '@alice:example.org' } },
      'main',
      'default',
      'agent:main:dm:alice',
    ],
    [
      'matrix Alice (another user)',
      { channel: 'matrix', peer: { kind: 'dm', id: '@Alice:example.org' } },
      'main',
      'default',
      'agent:main:dm:@%41lice%3aexample.org',
    ],
  ];
  it.each(rows)('routes as its README says: %s', async (_name, input, agentId, matchedBy, key) => {
    const resolver = new RouteResolver(await loadRoutingConfig(file));
    const route = resolver.resolve(input);
    expect([route.agentId, route.matchedBy, formatSessionKey(route.sessionKey)]).toStrictEqual([
      agentId,
      matchedBy,
      key,
    ]);
  });
});
