// The built bin (`dist/cli.js`) run as a child process: stdout, stderr and exit codes as a user
// sees them. Pipes are not terminals, so no output here may carry colour.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';

// Each test spawns the built CLI several times (about half a second each): allow for a loaded machine.
vi.setConfig({ testTimeout: 60_000 });
import {
  ACCEPTANCE_ROWS,
  ANSI,
  EXAM_GRAPH,
  EXAM_MERMAID,
  INVALID_CREW_PROBLEMS,
  INVALID_ROUTING_PROBLEMS,
  PACKAGE_DIR,
  PROBLEM_LINE,
  SHADOWED_ROUTING_SUMMARY,
  SHADOWED_ROUTING_WARNINGS,
  BUILD_TIMEOUT_MS,
  ensureBuiltCli,
  lines,
  runBuiltCli as cli,
  type CliResult,
} from './support.js';

beforeAll(() => {
  ensureBuiltCli();
}, BUILD_TIMEOUT_MS);

/** Exit 2 with exactly one line on stderr and nothing on stdout. */
function expectUsageError(result: CliResult, pattern: RegExp): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(lines(result.stderr)).toHaveLength(1);
  expect(result.stderr).toMatch(/^signalyard: error: /);
  expect(result.stderr).toMatch(pattern);
}

describe.concurrent('the bin', () => {
  it('starts with a node shebang, so it runs as `signalyard` once installed', async () => {
    expect(readFileSync(join(PACKAGE_DIR, 'dist', 'cli.js'), 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('prints the package version with --version', async () => {
    const { version } = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string };
    const result = await cli(['--version']);
    expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('without a command: one line on stderr, exit 2', async () => {
    expectUsageError(
      await cli([]),
      /missing command: validate, graph, resolve, route, sessions, inspect, approve, mcp, inbox, worker, cassettes, replay or eval/,
    );
  });

  it('an unknown command: one line on stderr with a suggestion, exit 2', async () => {
    expectUsageError(await cli(['validat', 'exam-crew.yaml']), /unknown command 'validat' \(did you mean validate\?\)/);
    expectUsageError(await cli(['help', 'frob']), /unknown command "frob"/);
  });
});

describe.concurrent('signalyard validate', () => {
  it('a valid crew.yaml: a one-line summary on stdout, exit 0', async () => {
    expect(await cli(['validate', 'exam-crew.yaml'])).toEqual({
      code: 0,
      stdout: 'exam-crew.yaml: valid crew: 3 agents, 3 signals, 1 parallel group, entry point "teacher"\n',
      stderr: '',
    });
  });

  it('a valid routing TOML: a one-line summary on stdout, exit 0', async () => {
    expect(await cli(['validate', 'routing.toml'])).toEqual({
      code: 0,
      stdout:
        'routing.toml: valid routing config: 2 bindings, 1 identity link, default agent "main", dm_scope "per-peer"\n',
      stderr: '',
    });
  });

  it('an invalid crew.yaml: every problem as file:line: path: message on stdout, exit 1', async () => {
    const result = await cli(['validate', 'invalid-crew.yaml']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)).toEqual(INVALID_CREW_PROBLEMS);
    for (const line of lines(result.stdout)) expect(line).toMatch(PROBLEM_LINE);
  });

  it('an invalid routing TOML: every problem as file:line: path: message on stdout, exit 1', async () => {
    const result = await cli(['validate', 'invalid-routing.toml']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)).toEqual(INVALID_ROUTING_PROBLEMS);
    for (const line of lines(result.stdout)) expect(line).toMatch(PROBLEM_LINE);
  });

  it('prints the file as given on the command line', async () => {
    const result = await cli(['validate', 'test/fixtures/invalid-crew.yaml'], { cwd: PACKAGE_DIR });
    expect(result.code).toBe(1);
    expect(lines(result.stdout)).toEqual(INVALID_CREW_PROBLEMS.map((p) => `test/fixtures/${p}`));
  });

  it('YAML and TOML syntax errors are problems with their line, exit 1', async () => {
    const yaml = await cli(['validate', 'broken-syntax.yaml']);
    expect(yaml.code).toBe(1);
    expect(lines(yaml.stdout)).toEqual([
      expect.stringMatching(/^broken-syntax\.yaml:\d+: \(root\): YAML syntax error: /),
    ]);
    const toml = await cli(['validate', 'broken-syntax.toml']);
    expect(toml.code).toBe(1);
    expect(lines(toml.stdout)).toEqual([
      expect.stringMatching(/^broken-syntax\.toml:1: \(root\): TOML syntax error: /),
    ]);
  });

  it('--kind overrides the extension', async () => {
    expect((await cli(['validate', 'routing.conf', '--kind', 'routing'])).code).toBe(0);
    const asRouting = await cli(['validate', 'exam-crew.yaml', '--kind', 'routing']);
    expect(asRouting.code).toBe(1);
    expect(asRouting.stdout).toMatch(/^exam-crew\.yaml:\d+: /);
  });

  it('a file whose kind the extension does not tell, without --kind: one line, exit 2', async () => {
    expectUsageError(await cli(['validate', 'routing.conf']), /"routing\.conf".*--kind crew or --kind routing/);
  });

  it('an unknown --kind: one line, exit 2', async () => {
    expectUsageError(
      await cli(['validate', 'routing.toml', '--kind', 'pipeline']),
      /argument 'pipeline' is invalid\. Allowed choices are crew, routing/,
    );
  });

  it('a missing file: one line naming it, exit 2', async () => {
    expectUsageError(await cli(['validate', 'nowhere.yaml']), /cannot read "nowhere\.yaml": no such file/);
  });

  it('unreadable input (a directory, bytes that are not UTF-8): one line, exit 2', async () => {
    expectUsageError(await cli(['validate', 'directory.yaml']), /cannot read "directory\.yaml": it is a directory/);
    expectUsageError(await cli(['validate', 'not-utf8.yaml']), /cannot read "not-utf8\.yaml": it is not UTF-8 text/);
  });

  it('an unknown flag: one line with a suggestion, exit 2', async () => {
    expectUsageError(
      await cli(['validate', 'exam-crew.yaml', '--knd', 'crew']),
      /unknown option '--knd' \(did you mean --kind\?\); see 'signalyard validate --help'/,
    );
  });

  it('a missing or extra argument: one line, exit 2', async () => {
    expectUsageError(await cli(['validate']), /missing required argument 'file'/);
    expectUsageError(await cli(['validate', 'a.yaml', 'b.yaml']), /too many arguments/);
  });

  it('bindings that can never win: warnings with their lines and the summary on stdout, exit 0', async () => {
    const result = await cli(['validate', 'routing-shadowed.toml']);
    expect(result).toEqual({
      code: 0,
      stdout: [...SHADOWED_ROUTING_WARNINGS, SHADOWED_ROUTING_SUMMARY].map((l) => `${l}\n`).join(''),
      stderr: '',
    });
  });

  it('--strict: the same findings as problems, exit 1', async () => {
    const result = await cli(['validate', 'routing-shadowed.toml', '--strict']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)).toEqual(SHADOWED_ROUTING_WARNINGS.map((w) => w.replace(': warning: ', ': ')));
    for (const line of lines(result.stdout)) expect(line).toMatch(PROBLEM_LINE);
  });
});

describe.concurrent('signalyard graph', () => {
  it('draws the exam crew as Mermaid by default', async () => {
    expect(await cli(['graph', 'exam-crew.yaml'])).toEqual({ code: 0, stdout: EXAM_MERMAID, stderr: '' });
    expect((await cli(['graph', 'exam-crew.yaml', '--format', 'mermaid'])).stdout).toBe(EXAM_MERMAID);
  });

  it('prints the exam crew as JSON with --format json', async () => {
    const result = await cli(['graph', 'exam-crew.yaml', '--format', 'json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual(EXAM_GRAPH);
  });

  it('prints the same bytes on every run', async () => {
    expect((await cli(['graph', 'exam-crew.yaml', '--format', 'json'])).stdout).toBe(
      (await cli(['graph', 'exam-crew.yaml', '--format', 'json'])).stdout,
    );
  });

  it('an invalid crew: every problem on stderr, nothing on stdout, exit 1', async () => {
    const result = await cli(['graph', 'invalid-crew.yaml']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual(INVALID_CREW_PROBLEMS);
  });

  it('an unknown format, an unknown flag, a missing or unreadable file: one line, exit 2', async () => {
    expectUsageError(await cli(['graph', 'exam-crew.yaml', '--format', 'dot']), /argument 'dot' is invalid/);
    expectUsageError(
      await cli(['graph', 'exam-crew.yaml', '--kind', 'crew']),
      /unknown option '--kind'; see 'signalyard graph --help'/,
    );
    expectUsageError(await cli(['graph', 'nowhere.yaml']), /cannot read "nowhere\.yaml": no such file/);
    expectUsageError(await cli(['graph', 'not-utf8.yaml']), /not UTF-8 text/);
    expectUsageError(await cli(['graph', 'routing.toml']), /"routing\.toml" looks like a routing file/);
  });
});

describe.concurrent('signalyard resolve', () => {
  it.each(ACCEPTANCE_ROWS)('the sessions contract row "$input" → $matchedBy, $agent, $key', async (row) => {
    const result = await cli(['resolve', '--config', 'routing.toml', ...row.args]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)).toEqual([
      `agent: ${row.agent}`,
      `session key: ${row.key}`,
      `matchedBy: ${row.matchedBy}`,
      `binding: ${row.binding}`,
    ]);
  });

  it.each(ACCEPTANCE_ROWS)('the sessions contract row "$input" as --json', async (row) => {
    const result = await cli(['resolve', '--config', 'routing.toml', ...row.args, '--json']);
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as {
      agentId: string;
      sessionKey: string;
      matchedBy: string;
      binding: { index: number; agentId: string } | null;
    };
    expect(out).toMatchObject({ agentId: row.agent, sessionKey: row.key, matchedBy: row.matchedBy });
    if (row.matchedBy === 'default') expect(out.binding).toBeNull();
    else expect(out.binding).toMatchObject({ index: row.binding.includes('[0]') ? 0 : 1, agentId: row.agent });
  });

  it('an invalid routing TOML: every problem on stderr, exit 1', async () => {
    const result = await cli(['resolve', '--config', 'invalid-routing.toml', '--channel', 'telegram']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual(INVALID_ROUTING_PROBLEMS);
  });

  it('missing --config or --channel, a bad --peer, an unknown flag, a missing config file: one line, exit 2', async () => {
    expectUsageError(await cli(['resolve', '--channel', 'cli']), /required option '--config <file>' not specified/);
    expectUsageError(
      await cli(['resolve', '--config', 'routing.toml']),
      /required option '--channel <channel>' not specified/,
    );
    expectUsageError(
      await cli(['resolve', '--config', 'routing.toml', '--channel', 'telegram', '--peer', '123']),
      /--peer "123": expected kind:id/,
    );
    expectUsageError(
      await cli(['resolve', '--config', 'routing.toml', '--channel', 'telegram', '--user', 'x']),
      /unknown option '--user'/,
    );
    expectUsageError(
      await cli(['resolve', '--config', 'nowhere.toml', '--channel', 'cli']),
      /cannot read "nowhere\.toml": no such file/,
    );
    expectUsageError(await cli(['resolve', '--config', 'directory.yaml', '--channel', 'cli']), /it is a directory/);
  });

  it('a channel that is not a channel name: one line naming --channel, exit 2', async () => {
    expectUsageError(await cli(['resolve', '--config', 'routing.toml', '--channel', '!!']), /--channel: .*"!!"/);
  });
});

describe.concurrent('signalyard route explain', () => {
  it('the resolution, then every binding on the channel with why it won or lost', async () => {
    const result = await cli([
      'route',
      'explain',
      '--config',
      'routing-shadowed.toml',
      '--channel',
      'telegram',
      '--peer',
      'dm:someone',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)).toEqual([
      'agent: general',
      'session key: agent:general:dm:someone',
      'matchedBy: channel',
      'binding: routing.bindings[0] (agent general)',
      'considered: 5 bindings on channel "telegram", in config order',
      '  routing.bindings[0] (agent general, channel tier): won: the first matching binding at the most specific tier that matched (channel)',
      '  routing.bindings[1] (agent vip, peer tier): no match: peer: wants dm "vip", got dm "someone"',
      '  routing.bindings[2] (agent vip-bot-1, peer tier): no match: peer: wants dm "vip", got dm "someone"; account: wants "bot-1", got "default"',
      '  routing.bindings[3] (agent support, team tier): no match: team: wants "t1", got none',
      '  routing.bindings[4] (agent team-only, team tier): no match: team: wants "t1", got none',
    ]);
  });

  it('--json: the explanation as JSON', async () => {
    const result = await cli(['route', 'explain', '--config', 'routing.toml', '--channel', 'telegram', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      agentId: 'general',
      matchedBy: 'channel',
      binding: { index: 1, agentId: 'general' },
      considered: [{ index: 1, tier: 'channel', matched: true }],
    });
  });

  it('an invalid config: problems on stderr, exit 1; a bad option or no subcommand: one line, exit 2', async () => {
    const invalid = await cli(['route', 'explain', '--config', 'invalid-routing.toml', '--channel', 'cli']);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toBe('');
    expect(lines(invalid.stderr)).toEqual(INVALID_ROUTING_PROBLEMS);
    expectUsageError(
      await cli(['route', 'explain', '--config', 'routing.toml', '--channel', 'cli', '--peer', 'x']),
      /--peer "x": expected kind:id/,
    );
    expectUsageError(await cli(['route']), /missing subcommand: explain/);
  });
});

describe.concurrent('--help', () => {
  it.each([
    [['--help'], 'Usage: signalyard [options] [command]'],
    [['-h'], 'Usage: signalyard [options] [command]'],
    [['validate', '--help'], 'Usage: signalyard validate [options] <file>'],
    [['graph', '--help'], 'Usage: signalyard graph [options] <crew-file>'],
    [['resolve', '--help'], 'Usage: signalyard resolve [options]'],
    [['help', 'resolve'], 'Usage: signalyard resolve [options]'],
    [['route', 'explain', '--help'], 'Usage: signalyard route explain [options]'],
    [['route', '--help'], 'Usage: signalyard route [options] [command]'],
  ])('signalyard %j prints its usage on stdout, exit 0', async (args, usage) => {
    const result = await cli(args);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)[0]).toBe(usage);
  });

  it('each command documents its options', async () => {
    expect((await cli(['validate', '--help'])).stdout).toContain('--kind <kind>');
    expect((await cli(['graph', '--help'])).stdout).toContain('--format <format>');
    const resolve = (await cli(['resolve', '--help'])).stdout;
    for (const flag of ['--config', '--channel', '--peer', '--account', '--guild', '--team', '--thread', '--json'])
      expect(resolve).toContain(flag);
  });
});

describe.concurrent('colour', () => {
  it('is never written to pipes, whatever the environment says', async () => {
    const env = { FORCE_COLOR: '3', NO_COLOR: undefined, TERM: 'xterm-256color' };
    for (const args of [
      ['validate', 'exam-crew.yaml'],
      ['validate', 'invalid-crew.yaml'],
      ['resolve', '--config', 'routing.toml', '--channel', 'cli'],
      ['route', 'explain', '--config', 'routing.toml', '--channel', 'telegram'],
      ['validate', 'routing-shadowed.toml'],
      ['validate', '--bogus'],
      ['--help'],
    ]) {
      const result = await cli(args, { env });
      expect(result.stdout).not.toMatch(ANSI);
      expect(result.stderr).not.toMatch(ANSI);
    }
  });
});
