// `run(argv, io)` in-process: the same command as the bin, with captured streams, a pinned
// environment and terminals on demand.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ExitCode, run, type CrewGraph } from '@signalyard/cli';
import {
  ACCEPTANCE_ROWS,
  ANSI,
  EXAM_GRAPH,
  EXAM_MERMAID,
  FIXTURES,
  INVALID_CREW_PROBLEMS,
  INVALID_ROUTING_PROBLEMS,
  PACKAGE_DIR,
  lines,
  runInProcess as cli,
  type CliResult,
} from './support.js';

/** Exit 2 with exactly one line on stderr and nothing on stdout. */
async function expectUsageError(args: readonly string[], pattern: RegExp): Promise<void> {
  const result = await cli(args);
  expect(result.code).toBe(ExitCode.Usage);
  expect(result.stdout).toBe('');
  expect(lines(result.stderr)).toHaveLength(1);
  expect(result.stderr).toMatch(pattern);
}

/** `signalyard validate <name>` on a file holding `text`, in a scratch directory of its own. */
async function validateText(name: string, text: string): Promise<CliResult> {
  const dir = mkdtempSync(join(tmpdir(), 'signalyard-cli-'));
  try {
    writeFileSync(join(dir, name), text);
    return await cli(['validate', name], { cwd: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('run', () => {
  it('resolves with the exit code and never rejects', async () => {
    expect(await cli(['validate', 'exam-crew.yaml'])).toMatchObject({ code: 0 });
    expect(await cli(['validate', 'invalid-crew.yaml'])).toMatchObject({ code: 1 });
    expect(await cli(['validate', 'nowhere.yaml'])).toMatchObject({ code: 2 });
  });

  it('ExitCode names the three codes', () => {
    expect(ExitCode).toEqual({ Ok: 0, Problems: 1, Usage: 2 });
    expect(Object.isFrozen(ExitCode)).toBe(true);
  });

  it('argv that is not an array of strings is a usage error, not a TypeError', async () => {
    let stderr = '';
    const io = { stdout: { write: () => undefined }, stderr: { write: (s: string) => (stderr += s) }, env: {} };
    expect(await run('validate' as unknown as string[], io)).toBe(2);
    expect(await run([42] as unknown as string[], io)).toBe(2);
    expect(lines(stderr)).toEqual([
      'signalyard: error: run(argv): expected argv as an array of strings (the arguments after the program name)',
      'signalyard: error: run(argv): expected argv as an array of strings (the arguments after the program name)',
    ]);
  });

  it('resolves relative paths against io.cwd and prints them as given', async () => {
    const result = await cli(['validate', 'test/fixtures/invalid-routing.toml'], { cwd: PACKAGE_DIR });
    expect(result.code).toBe(1);
    expect(lines(result.stdout)).toEqual(INVALID_ROUTING_PROBLEMS.map((p) => `test/fixtures/${p}`));
  });

  it('accepts absolute paths', async () => {
    const file = `${FIXTURES}/exam-crew.yaml`;
    expect((await cli(['validate', file], { cwd: '/' })).stdout).toBe(
      `${file}: valid crew: 3 agents, 3 signals, 1 parallel group, entry point "teacher"\n`,
    );
  });

  it('defaults to the process streams, environment and directory', async () => {
    const writes: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    const cwd = process.cwd();
    try {
      process.chdir(FIXTURES);
      expect(await run(['validate', 'routing.toml'])).toBe(0);
    } finally {
      process.chdir(cwd);
      spy.mockRestore();
    }
    expect(writes.join('')).toMatch(/^routing\.toml: .*valid.* routing config: 2 bindings/);
  });

  it('concurrent runs keep their output apart', async () => {
    const [a, b, c] = await Promise.all([
      cli(['graph', 'exam-crew.yaml']),
      cli(['validate', 'invalid-crew.yaml']),
      cli(['resolve', '--config', 'routing.toml', '--channel', 'cli']),
    ]);
    expect(a.stdout).toBe(EXAM_MERMAID);
    expect(lines(b.stdout)).toEqual(INVALID_CREW_PROBLEMS);
    expect(c.stdout).toContain('session key: agent:main:main');
  });
});

describe('validate', () => {
  it('tells crew from routing by extension, case-insensitively, .yml included', async () => {
    expect((await cli(['validate', 'exam-crew.yaml'])).stdout).toContain('valid crew');
    expect((await cli(['validate', 'routing.toml'])).stdout).toContain('valid routing config');
    expect((await cli(['validate', 'crew.YML'])).stdout).toContain(
      'valid crew: 1 agent, 0 signals, 0 parallel groups, entry point "solo"',
    );
  });

  it('--kind crew reads any extension as a crew', async () => {
    const result = await cli(['validate', 'routing.conf', '--kind', 'crew']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^routing\.conf:\d+: /);
  });

  it('a routing file with no [routing] table is the default configuration', async () => {
    const result = await cli(['validate', 'empty.toml']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('valid routing config: 0 bindings');
  });

  it('an empty crew file is a problem, not a crash', async () => {
    const result = await cli(['validate', 'empty.toml', '--kind', 'crew']);
    expect(result.code).toBe(1);
    expect(lines(result.stdout)).toEqual([
      'empty.toml:1: (root): the document is empty: expected a mapping with entry_point and agents',
    ]);
  });

  it('summarises a routing config with its counts', async () => {
    expect((await cli(['validate', 'routing-single.toml'])).stdout).toBe(
      'routing-single.toml: valid routing config: 1 binding, 0 identity links, default agent "main", dm_scope "per-channel-peer"\n',
    );
  });

  it('usage errors are one line', async () => {
    await expectUsageError(
      ['validate'],
      /^signalyard: error: missing required argument 'file'; see 'signalyard validate --help'$/m,
    );
    await expectUsageError(['validate', 'routing.conf'], /cannot tell what "routing\.conf" is from its extension/);
    await expectUsageError(['validate', 'x.json'], /cannot read "x\.json": no such file/);
    await expectUsageError(['validate', 'exam-crew.yaml', '--kind'], /option '--kind <kind>' argument missing/);
    await expectUsageError(['validate', 'directory.yaml'], /it is a directory, not a file/);
    await expectUsageError(
      ['validate', 'fixture-is-not-a-dir.yaml/x.yaml'],
      /cannot read "fixture-is-not-a-dir\.yaml\/x\.yaml": no such file/,
    );
    await expectUsageError(['validate', 'exam-crew.yaml/x.yaml'], /no such file \(a parent is not a directory\)/);
    await expectUsageError(['--bogus'], /unknown option '--bogus'; see 'signalyard --help'/);
  });

  it('a directory is reported as one, whatever its name, with or without --kind', async () => {
    for (const args of [
      ['validate', '.'],
      ['validate', '..'],
      ['validate', '.', '--kind', 'routing'],
    ]) {
      await expectUsageError(args, /^signalyard: error: cannot read "\.{1,2}": it is a directory, not a file$/m);
    }
  });

  it('an unterminated YAML quote is reported at the line where it opens', async () => {
    for (const [name, text] of [
      ['with-break.yaml', 'entry_point: a\nagents:\n  - id: a\n    description: "open\nrouting: {}\n'],
      ['without-break.yaml', 'entry_point: a\nagents:\n  - id: a\n    description: "open\nrouting: {}'],
      ['crlf.yaml', 'entry_point: a\r\nagents:\r\n  - id: a\r\n    description: "open\r\nrouting: {}\r\n'],
    ] as const) {
      const result = await validateText(name, text);
      expect(result.code, name).toBe(ExitCode.Problems);
      expect(result.stdout, name).toMatch(
        new RegExp(`^${name}:4: \\(root\\): YAML syntax error: Missing closing "quote`),
      );
    }
  });

  it('a TOML error found where the text ends is reported within the file, at its last line', async () => {
    const result = await validateText('routing.toml', '[routing]\ndefault_agent = [1,\n');
    expect(result.code).toBe(ExitCode.Problems);
    expect(result.stdout).toMatch(/^routing\.toml:2: \(root\): TOML syntax error: /);
  });

  it('an unterminated TOML string is reported as one, at the line where it opens', async () => {
    const result = await validateText('routing.toml', '[routing]\ndefault_agent = "main\n\n[routing.session]\n');
    expect(result.code).toBe(ExitCode.Problems);
    expect(result.stdout).toMatch(/^routing\.toml:2: \(root\): TOML syntax error: unterminated string: /);
    expect(result.stdout).not.toContain('control characters');
  });

  it('a path too long for the file system: one line, exit 2', async () => {
    await expectUsageError(['validate', `${'x'.repeat(5000)}.yaml`], /cannot read ".*": the path is too long/);
  });
});

describe('graph', () => {
  it('prints Mermaid by default and JSON with --format json', async () => {
    expect(await cli(['graph', 'exam-crew.yaml'])).toEqual({ code: 0, stdout: EXAM_MERMAID, stderr: '' });
    const json = await cli(['graph', 'exam-crew.yaml', '--format', 'json']);
    expect(JSON.parse(json.stdout)).toEqual(EXAM_GRAPH);
    expect(json.stdout).toBe(`${JSON.stringify(EXAM_GRAPH, null, 2)}\n`);
  });

  it('shows how the crew hands off: transfer tools on the edges, the mode in the title and the JSON', async () => {
    const mermaid = await cli(['graph', 'desk-tool-crew.yaml']);
    expect(mermaid).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        '---',
        'title: "handoffs: transfer tools · a new message resumes at the last agent"',
        '---',
        'flowchart LR',
        '    start(("start"))',
        '    a0["triage"]',
        '    a1["billing"]',
        '    stop((("end")))',
        '    start --> a0',
        '    a0 -->|"transfer_to_billing"| a1',
        '    a1 -->|"resolved"| stop',
        '',
      ].join('\n'),
    });
    const json = JSON.parse((await cli(['graph', 'desk-tool-crew.yaml', '--format', 'json'])).stdout) as CrewGraph;
    expect(json).toMatchObject({ handoffMode: 'tool', resumeAt: 'last_agent' });
    expect(json.edges[0]).toEqual({
      kind: 'signal',
      from: 'triage',
      to: 'billing',
      toKind: 'agent',
      signal: '[ROUTE_BILLING]',
      tool: 'transfer_to_billing',
    });
    expect(json.terminations).toEqual([{ kind: 'signal', agent: 'billing', signal: '[RESOLVED]', tool: 'resolved' }]);
  });

  it('never colours its output, even on a terminal (Mermaid and JSON are for programs)', async () => {
    const result = await cli(['graph', 'exam-crew.yaml'], { tty: true });
    expect(result.stdout).toBe(EXAM_MERMAID);
  });

  it('refuses a .toml file with one line', async () => {
    await expectUsageError(['graph', 'routing.toml'], /"routing\.toml" looks like a routing file: graph draws a crew/);
  });

  it('a value --format does not accept: the allowed choices, in one sentence', async () => {
    await expectUsageError(
      ['graph', 'exam-crew.yaml', '--format', 'dot'],
      /^signalyard: error: option '--format <format>' argument 'dot' is invalid\. Allowed choices are mermaid, json; see 'signalyard graph --help'$/m,
    );
  });

  it('reports every problem of an invalid crew, exit 1', async () => {
    const result = await cli(['graph', 'invalid-crew.yaml', '--format', 'json']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual(INVALID_CREW_PROBLEMS);
  });
});

describe('resolve', () => {
  it.each(ACCEPTANCE_ROWS)('the sessions contract row "$input"', async (row) => {
    const result = await cli(['resolve', '--config', 'routing.toml', ...row.args]);
    expect(result.code).toBe(0);
    expect(lines(result.stdout)).toEqual([
      `agent: ${row.agent}`,
      `session key: ${row.key}`,
      `matchedBy: ${row.matchedBy}`,
      `binding: ${row.binding}`,
    ]);
  });

  it('--json prints the whole resolution', async () => {
    const result = await cli([
      'resolve',
      '--config',
      'routing.toml',
      '--channel',
      'Telegram',
      '--peer',
      'dm:123',
      '--account',
      ' bot-1 ',
      '--json',
    ]);
    expect(JSON.parse(result.stdout)).toEqual({
      agentId: 'general',
      sessionKey: 'agent:general:dm:john',
      mainSessionKey: 'agent:general:main',
      matchedBy: 'channel',
      channel: 'telegram',
      accountId: 'bot-1',
      binding: { index: 1, agentId: 'general', match: { channel: 'telegram', accountId: '*' } },
    });
    const fallback = await cli(['resolve', '--config', 'routing.toml', '--channel', 'cli', '--json']);
    expect(JSON.parse(fallback.stdout)).toMatchObject({
      agentId: 'main',
      matchedBy: 'default',
      binding: null,
      accountId: 'default',
    });
  });

  it('passes --account, --guild, --team and --thread through to the resolver', async () => {
    const base = ['resolve', '--config', 'routing-tiers.toml'];
    const out = async (...args: string[]): Promise<string> => (await cli([...base, ...args])).stdout;
    expect(await out('--channel', 'discord', '--guild', 'G1', '--peer', 'channel:general')).toContain(
      'matchedBy: guild',
    );
    expect(await out('--channel', 'discord', '--account', 'bot-2', '--peer', 'dm:9')).toContain(
      'binding: routing.bindings[2] (agent second-bot)',
    );
    expect(await out('--channel', 'discord', '--peer', 'dm:vip')).toContain('matchedBy: peer');
    expect(await out('--channel', 'discord', '--guild', 'G1', '--peer', 'group:g', '--thread', 'T-7')).toContain(
      'session key: agent:guild-agent:discord:group:g:thread:t-7',
    );
  });

  it('splits --peer at the first colon, so ids may contain colons', async () => {
    const result = await cli([
      'resolve',
      '--config',
      'routing.toml',
      '--channel',
      'matrix',
      '--peer',
      'DM:@alice:example.org',
    ]);
    expect(result.stdout).toContain('session key: agent:main:dm:@alice%3aexample.org');
  });

  it('bad --peer values: one line, exit 2', async () => {
    for (const peer of ['123', 'dm:', 'dm:  ', 'user:1', ':1']) {
      await expectUsageError(
        ['resolve', '--config', 'routing.toml', '--channel', 'telegram', '--peer', peer],
        /--peer ".*": expected kind:id, such as dm:123/,
      );
    }
  });

  it('--thread without a group-like peer: one line, exit 2', async () => {
    await expectUsageError(
      ['resolve', '--config', 'routing.toml', '--channel', 'telegram', '--thread', 't'],
      /--thread needs a group, channel or thread --peer/,
    );
    await expectUsageError(
      ['resolve', '--config', 'routing.toml', '--channel', 'telegram', '--peer', 'dm:1', '--thread', 't'],
      /--thread needs/,
    );
  });

  it('values the resolver cannot key name their option: one line, exit 2', async () => {
    const base = ['resolve', '--config', 'routing.toml'];
    await expectUsageError([...base, '--channel', '!!'], /^signalyard: error: --channel: .*"!!"/);
    await expectUsageError([...base, '--channel', 'x', '--account', ' '], /--account: /);
    await expectUsageError([...base, '--channel', 'x', '--guild', ''], /--guild: /);
    await expectUsageError([...base, '--channel', 'x', '--team', ' '], /--team: /);
    await expectUsageError([...base, '--channel', 'x', '--peer', 'group:g', '--thread', ' '], /--thread: /);
  });

  it('an invalid routing config: every problem, exit 1', async () => {
    const result = await cli(['resolve', '--config', 'invalid-routing.toml', '--channel', 'cli']);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual(INVALID_ROUTING_PROBLEMS);
  });
});

describe('help', () => {
  it.each([['--help'], ['validate', '--help'], ['graph', '-h'], ['resolve', '--help'], ['help'], ['help', 'graph']])(
    '%j prints usage on stdout, exit 0',
    async (...args) => {
      const result = await cli(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^Usage: signalyard/);
    },
  );

  it('`help <unknown>` is one line, exit 2', async () => {
    await expectUsageError(
      ['help', 'frob'],
      /unknown command "frob": expected validate, graph, resolve, route, sessions, inspect, approve, mcp, inbox, worker, cassettes, replay or eval/,
    );
  });

  it('wraps help at the terminal width', async () => {
    let out = '';
    await run(['resolve', '--help'], { stdout: { write: (s: string) => (out += s), columns: 200 }, env: {} });
    expect(out).toContain('--channel <channel>  the channel the message came in on (telegram, slack, cli, ...)\n');
  });
});

describe('colour', () => {
  it('on a terminal: problems, summaries, errors and help titles are coloured', async () => {
    const problems = await cli(['validate', 'invalid-crew.yaml'], { tty: true });
    expect(lines(problems.stdout)[0]).toBe(
      '\u001b[1minvalid-crew.yaml:1\u001b[22m: \u001b[36mentry_point\u001b[39m: unknown agent "principal" (agents: "teacher", "student")',
    );
    expect((await cli(['validate', 'exam-crew.yaml'], { tty: true })).stdout).toContain('\u001b[32mvalid\u001b[39m');
    expect((await cli(['validate', 'nowhere.yaml'], { tty: true })).stderr).toMatch(
      // eslint-disable-next-line no-control-regex -- ANSI escapes are the point
      /^signalyard: \u001b\[31merror:\u001b\[39m /,
    );
    expect((await cli(['resolve', '--config', 'routing.toml', '--channel', 'cli'], { tty: true })).stdout).toContain(
      '\u001b[1mmain\u001b[22m',
    );
    expect((await cli(['--help'], { tty: true })).stdout).toContain('\u001b[1mUsage:\u001b[22m');
  });

  it('NO_COLOR (non-empty) turns it off; an empty NO_COLOR does not', async () => {
    const off = await cli(['validate', 'invalid-crew.yaml'], { tty: true, env: { NO_COLOR: '1' } });
    expect(off.stdout).not.toMatch(ANSI);
    expect(lines(off.stdout)).toEqual(INVALID_CREW_PROBLEMS);
    const on = await cli(['validate', 'invalid-crew.yaml'], { tty: true, env: { NO_COLOR: '' } });
    expect(on.stdout).toMatch(ANSI);
  });

  it('TERM=dumb turns it off', async () => {
    const result = await cli(['validate', 'exam-crew.yaml'], { tty: true, env: { TERM: 'dumb' } });
    expect(result.stdout).not.toMatch(ANSI);
  });

  it('is decided per stream: a terminal stdout does not colour a piped stderr', async () => {
    let stdout = '';
    let stderr = '';
    const code = await run(['graph', 'invalid-crew.yaml'], {
      stdout: { write: (s: string) => (stdout += s), isTTY: true },
      stderr: { write: (s: string) => (stderr += s), isTTY: false },
      env: {},
      cwd: FIXTURES,
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).not.toMatch(ANSI);
  });

  it('never on a stream that is not a terminal', async () => {
    for (const args of [
      ['validate', 'invalid-crew.yaml'],
      ['validate', 'exam-crew.yaml'],
      ['validate', '--nope'],
      ['--help'],
    ]) {
      const result = await cli(args, { env: { FORCE_COLOR: '1' } });
      expect(result.stdout).not.toMatch(ANSI);
      expect(result.stderr).not.toMatch(ANSI);
    }
  });
});
