// A corpus of routing TOML documents pinning down the line every problem reports. The routing
// loader parses with smol-toml (which gives no positions) and finds lines with its own small
// key scanner (src/toml-key-lines.ts): this corpus covers every key form that scanner must
// understand, and the traps it must not fall into (text inside strings and comments that looks
// like a key or a table header).
//
// Each expectation names the problem's path and a piece of text found on exactly one line of the
// document, outside strings that could contain it: the problem must be reported on that line.
import { describe, expect, it } from 'vitest';
import { parseRoutingConfig, type ConfigProblem } from '@signalyard/sessions';
import { lineOf, locateTomlKeys } from '../src/toml-key-lines.js';
import { configProblems } from './support.js';

interface Case {
  readonly name: string;
  readonly toml: string;
  /** [problem path, text on the problem's line] — every problem the document has. */
  readonly expect: readonly (readonly [string, string])[];
}

/** The 1-based line of the one line of `toml` that contains `needle`. */
function lineWith(toml: string, needle: string): number {
  const lines = toml.split(/\r?\n/);
  const found = lines.flatMap((line, i) => (line.includes(needle) ? [i + 1] : []));
  if (found.length !== 1) throw new Error(`${JSON.stringify(needle)} is on ${found.length} lines, expected 1`);
  return found[0] as number;
}

const CORPUS: readonly Case[] = [
  {
    name: 'bare keys in a table',
    toml: `[routing]
default_agent = "Main Agent"
colour = "red"
`,
    expect: [
      ['routing.default_agent', 'default_agent ='],
      ['routing.colour', 'colour ='],
    ],
  },
  {
    name: 'bare keys with digits, dashes and underscores (a key starting with a digit prints quoted)',
    toml: `[routing]
1abc = 1
-dash = 2
under_score-9 = 3
`,
    expect: [
      ['routing["1abc"]', '1abc ='],
      ['routing["-dash"]', '-dash ='],
      ['routing.under_score-9', 'under_score-9 ='],
    ],
  },
  {
    name: 'quoted keys: basic with escapes, literal, and names that are not bare',
    toml: `[routing]
"default_agent" = "Bad Id"
'colour' = 1
"with space" = 2
"dot.ted" = 3
"esc\\"aped\\u0041" = 4
'' = 5
`,
    expect: [
      ['routing.default_agent', '"default_agent" ='],
      ['routing.colour', `'colour' =`],
      ['routing["with space"]', '"with space" ='],
      ['routing["dot.ted"]', '"dot.ted" ='],
      ['routing["esc\\"apedA"]', '"esc\\"aped'],
      ['routing[""]', `'' = 5`],
    ],
  },
  {
    name: 'dotted keys, with spaces and tabs around the dots, from the top level',
    toml: `routing . default_agent = "Nope Nope"
routing.session	.	dm_scope = "per-person"
routing . "session" . 'identity_links' . john = ["telegram:1", "bare"]
routing.bogus . deeper = 1
`,
    expect: [
      ['routing.default_agent', 'routing . default_agent'],
      ['routing.session.dm_scope', 'dm_scope = "per-person"'],
      ['routing.session.identity_links.john[1]', `'identity_links' . john`],
      ['routing.bogus', 'routing.bogus'],
    ],
  },
  {
    name: 'table headers, with spaces and quotes inside the brackets, and nested tables',
    toml: `[ routing ]
default_agent = "main"

[ routing . "session" ]
dm_scope = "nope"

[routing.session.identity_links]
ann = ["bare-ann"]

[routing.extra]
x = 1

[routing.session.more]
y = 2
`,
    expect: [
      ['routing.session.dm_scope', 'dm_scope = "nope"'],
      ['routing.session.identity_links.ann[0]', 'ann = '],
      ['routing.extra', '[routing.extra]'],
      ['routing.session.more', '[routing.session.more]'],
    ],
  },
  {
    name: 'a super-table defined after its sub-table',
    toml: `[routing.session]
dm_scope = "main"

[routing]
default_agent = "Late Bad"
`,
    expect: [['routing.default_agent', 'default_agent = "Late Bad"']],
  },
  {
    name: 'arrays of tables, each element with its own sub-tables',
    toml: `[[routing.bindings]]
agent_id = "first"
[routing.bindings.match]
channel = "telegram"
acount_id = "typo"

[[routing.bindings]]
agent_id = "Second Bad"
[routing.bindings.match]
channel = "slack"
[routing.bindings.match.peer]
kind = "person"
id = "u1"

[[ routing . bindings ]]
agent_id = "third"
colour = "red"
[routing.bindings.match]
channel = "discord"
`,
    expect: [
      ['routing.bindings[0].match.acount_id', 'acount_id ='],
      ['routing.bindings[1].agent_id', 'agent_id = "Second Bad"'],
      ['routing.bindings[1].match.peer.kind', 'kind = "person"'],
      ['routing.bindings[2].colour', 'colour = "red"'],
    ],
  },
  {
    name: 'inline tables, nested, and spanning lines',
    toml: `[routing]
session = { dm_scope = "main", bogus = true }
bindings = [
  { agent_id = "a", match = { channel = "telegram", peer = { kind = "dm", id = "u", extra = 1 } } },
  { agent_id = "b", match = {
      channel = "slack",
      colour = "red" } },
]
`,
    expect: [
      ['routing.session.bogus', 'bogus = true'],
      ['routing.bindings[0].match.peer.extra', 'extra = 1'],
      ['routing.bindings[1].match.colour', 'colour = "red"'],
    ],
  },
  {
    name: 'arrays spanning lines, with comments between items',
    toml: `[routing.session]
case_sensitive_channels = [
  "telegram", # fine
  # a comment: [routing.fake] x = 1
  "Not A Channel",
]
[routing.session.identity_links]
bob = [
  'telegram:1',

  "bare-bob", # the bad one
]
`,
    expect: [
      ['routing.session.case_sensitive_channels[1]', '"Not A Channel"'],
      ['routing.session.identity_links.bob[1]', '"bare-bob"'],
    ],
  },
  {
    name: 'multi-line basic strings holding "=" and "[" that are not keys or headers',
    toml: `[routing]
default_agent = """
colour = "this is text, not a key"
[routing.session]
dm_scope = "text too"
"""
bogus = 1
[routing.session]
dm_scope = "really bad"
`,
    expect: [
      ['routing.default_agent', 'default_agent = """'],
      ['routing.bogus', 'bogus = 1'],
      ['routing.session.dm_scope', 'dm_scope = "really bad"'],
    ],
  },
  {
    name: 'multi-line literal strings, escaped line ends and quotes closing a multi-line string',
    toml: `[routing.session.identity_links]
ann = ['''
telegram:1''', """telegram:\\
2""", '''x = [y]
''z''']
[routing]
default_agent = """a "quoted" b"""""
bad-key = 1
`,
    expect: [
      ['routing.session.identity_links.ann[2]', `'''x = [y]`],
      ['routing.default_agent', 'default_agent = """a'],
      ['routing.bad-key', 'bad-key = 1'],
    ],
  },
  {
    name: 'single-line strings holding "=", "[", "#" and quotes',
    toml: `[routing]
default_agent = "a = [b] # c"
x = 'lit = [x] "q"' # a comment with = and [x]
y = "esc \\" = [z]"
`,
    expect: [
      ['routing.default_agent', 'default_agent ='],
      ['routing.x', `x = 'lit`],
      ['routing.y', 'y = "esc'],
    ],
  },
  {
    name: 'comments everywhere, including header look-alikes',
    toml: `# [routing]
# default_agent = "nope"
[routing] # the real one
  # bogus = 1
default_agent = "main" # fine
colour = 1 # [[routing.bindings]]
`,
    expect: [['routing.colour', 'colour = 1']],
  },
  {
    name: 'CRLF line endings and a leading byte-order mark',
    toml: '\uFEFF[routing]\r\ndefault_agent = "Bad Bad"\r\n\r\n[routing.session]\r\ndm_scope = "no"\r\n',
    expect: [
      ['routing.default_agent', 'default_agent'],
      ['routing.session.dm_scope', 'dm_scope'],
    ],
  },
  {
    name: 'unknown top-level tables and keys',
    toml: `title = "x"
[routing]
default_agent = "main"
[other]
[other.sub]
z = 1
`,
    expect: [
      ['title', 'title ='],
      ['other', '[other]'],
    ],
  },
];

describe('the line of every problem key, over a corpus of routing TOML documents', () => {
  describe.each(CORPUS)('$name', ({ toml, expect: expected }) => {
    const problems: readonly ConfigProblem[] = configProblems(() => parseRoutingConfig(toml));

    it.each(expected)('%s is reported on the line with %j', (path, needle) => {
      const found = problems.filter((p) => p.path === path);
      expect(found, `problems: ${JSON.stringify(problems, null, 2)}`).toHaveLength(1);
      expect(found[0]?.line).toBe(lineWith(toml, needle));
    });

    it('has no other problem, and every problem has a line', () => {
      expect(problems.map((p) => p.path).sort()).toEqual(expected.map(([path]) => path).sort());
      for (const p of problems) expect(p.line, p.path).toBeGreaterThan(0);
    });
  });
});

describe('locateTomlKeys / lineOf (the scanner on its own)', () => {
  it('finds a path below a key through its nearest enclosing key that has a line', () => {
    const lines = locateTomlKeys('[a]\nb = { c = 1 }\n');
    expect(lineOf(lines, ['a', 'b', 'c'])).toBe(2);
    expect(lineOf(lines, ['a', 'b', 'c', 'missing', 'deeper'])).toBe(2);
    expect(lineOf(lines, ['a', 'missing'])).toBe(1);
    expect(lineOf(lines, ['missing'])).toBeUndefined();
    expect(lineOf(lines, [])).toBeUndefined();
  });

  it('gives array items their own lines', () => {
    const lines = locateTomlKeys('x = [\n  1,\n  [2, 3],\n  { y = 4 },\n]\n');
    expect(lineOf(lines, ['x', 0])).toBe(2);
    expect(lineOf(lines, ['x', 1, 1])).toBe(3);
    expect(lineOf(lines, ['x', 2, 'y'])).toBe(4);
  });

  it('counts arrays of tables per parent', () => {
    const lines = locateTomlKeys('[[a]]\n[[a.b]]\n[[a]]\n[[a.b]]\n[[a.b]]\nk = 1\n');
    expect(lineOf(lines, ['a', 0, 'b', 0])).toBe(2);
    expect(lineOf(lines, ['a', 1])).toBe(3);
    expect(lineOf(lines, ['a', 1, 'b', 1, 'k'])).toBe(6);
  });

  it('keeps the lines found before text it cannot scan, and never throws', () => {
    const lines = locateTomlKeys('a = 1\nb = "unterminated\nc = 3\n');
    expect(lineOf(lines, ['a'])).toBe(1);
    for (const text of ['[', '[[a', 'a', 'a =', '"', "'''", 'a = {', 'a = [1,', '= 1', 'a.b.']) {
      expect(() => locateTomlKeys(text)).not.toThrow();
    }
  });

  it('ignores a symbol in a path', () => {
    expect(lineOf(locateTomlKeys('a = 1\n'), ['a', Symbol('x')])).toBe(1);
  });
});
