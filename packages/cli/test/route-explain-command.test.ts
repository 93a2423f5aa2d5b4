// `signalyard route explain`: the resolution as `resolve` prints it, then every binding on the
// message's channel with why it won or lost (`RouteResolver.explain`).
import { describe, expect, it } from 'vitest';
import { ACCEPTANCE_ROWS, INVALID_ROUTING_PROBLEMS, lines, runInProcess as cli } from './support.js';

/** Exit 2 with exactly one line on stderr and nothing on stdout. */
async function expectUsageError(args: readonly string[], pattern: RegExp): Promise<void> {
  const result = await cli(args);
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(lines(result.stderr)).toHaveLength(1);
  expect(result.stderr).toMatch(pattern);
}

const WON = (tier: string): string =>
  `won: the first matching binding at the most specific tier that matched (${tier})`;

/** The considered lines for each acceptance row (routing.toml: [0] slack team → work, [1] telegram → general). */
const CONSIDERED: Record<string, string[]> = {
  'telegram, dm 123': [
    'considered: 1 binding on channel "telegram", in config order',
    `  routing.bindings[1] (agent general, channel tier): ${WON('channel')}`,
  ],
  'telegram, group grp1': [
    'considered: 1 binding on channel "telegram", in config order',
    `  routing.bindings[1] (agent general, channel tier): ${WON('channel')}`,
  ],
  'discord, dm 456': ['considered: none (no binding on channel "discord")'],
  'slack, team T12345, dm user789': [
    'considered: 1 binding on channel "slack", in config order',
    `  routing.bindings[0] (agent work, team tier): ${WON('team')}`,
  ],
  'cli (no peer)': ['considered: none (no binding on channel "cli")'],
};

describe('route explain', () => {
  it.each(ACCEPTANCE_ROWS)(
    'the sessions contract row "$input": the resolution, then the bindings considered',
    async (row) => {
      const explained = await cli(['route', 'explain', '--config', 'routing.toml', ...row.args]);
      const resolved = await cli(['resolve', '--config', 'routing.toml', ...row.args]);
      expect(explained.code).toBe(0);
      expect(explained.stderr).toBe('');
      expect(lines(explained.stdout)).toEqual([...lines(resolved.stdout), ...(CONSIDERED[row.input] ?? [])]);
    },
  );

  it('says why each binding lost: a more specific tier, an earlier binding of the same tier, each failed constraint', async () => {
    const base = ['route', 'explain', '--config', 'routing-shadowed.toml', '--channel', 'telegram'];
    expect(lines((await cli([...base, '--peer', 'dm:VIP'])).stdout)).toEqual([
      'agent: vip',
      'session key: agent:vip:dm:vip',
      'matchedBy: peer',
      'binding: routing.bindings[1] (agent vip)',
      'considered: 5 bindings on channel "telegram", in config order',
      '  routing.bindings[0] (agent general, channel tier): matched, but bindings[1] matched at a more specific tier (peer beats channel)',
      `  routing.bindings[1] (agent vip, peer tier): ${WON('peer')}`,
      '  routing.bindings[2] (agent vip-bot-1, peer tier): no match: account: wants "bot-1", got "default"',
      '  routing.bindings[3] (agent support, team tier): no match: team: wants "t1", got none',
      '  routing.bindings[4] (agent team-only, team tier): no match: team: wants "t1", got none',
    ]);
    const sameTier = lines((await cli([...base, '--peer', 'dm:vip', '--account', 'bot-1', '--team', 'T1'])).stdout);
    expect(sameTier).toContain(
      '  routing.bindings[2] (agent vip-bot-1, peer tier): matched, but bindings[1] comes first at the same tier (peer)',
    );
    expect(sameTier).toContain(
      '  routing.bindings[4] (agent team-only, team tier): matched, but bindings[1] matched at a more specific tier (peer beats team)',
    );
  });

  it('passes --account, --guild, --team and --thread through, as resolve does', async () => {
    const base = ['route', 'explain', '--config', 'routing-tiers.toml', '--channel', 'discord'];
    const out = lines((await cli([...base, '--account', 'bot-2', '--peer', 'dm:9'])).stdout);
    expect(out.slice(4)).toEqual([
      'considered: 3 bindings on channel "discord", in config order',
      '  routing.bindings[0] (agent guild-agent, guild tier): no match: guild: wants "g1", got none',
      '  routing.bindings[1] (agent vip-agent, peer tier): no match: peer: wants dm "vip", got dm "9"',
      `  routing.bindings[2] (agent second-bot, account tier): ${WON('account')}`,
    ]);
    const thread = lines((await cli([...base, '--guild', 'G1', '--peer', 'group:g', '--thread', 'T-7'])).stdout);
    expect(thread[1]).toBe('session key: agent:guild-agent:discord:group:g:thread:t-7');
  });

  it('--json prints the resolution as resolve --json does, plus every binding considered', async () => {
    const result = await cli([
      'route',
      'explain',
      '--config',
      'routing.toml',
      '--channel',
      'Slack',
      '--team',
      'T12345',
      '--peer',
      'dm:user789',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const resolved = await cli([
      'resolve',
      '--config',
      'routing.toml',
      '--channel',
      'Slack',
      '--team',
      'T12345',
      '--peer',
      'dm:user789',
      '--json',
    ]);
    const { considered, ...rest } = JSON.parse(result.stdout) as { considered: unknown };
    expect(rest).toEqual(JSON.parse(resolved.stdout));
    expect(considered).toEqual([
      {
        index: 0,
        binding: { agentId: 'work', match: { channel: 'slack', accountId: '*', teamId: 'T12345' } },
        tier: 'team',
        matched: true,
        reason: WON('team'),
      },
    ]);
    const none = JSON.parse(
      (await cli(['route', 'explain', '--config', 'routing.toml', '--channel', 'cli', '--json'])).stdout,
    );
    expect(none).toMatchObject({ agentId: 'main', matchedBy: 'default', binding: null, considered: [] });
  });

  it('an invalid routing config: every problem on stderr, exit 1', async () => {
    const result = await cli(['route', 'explain', '--config', 'invalid-routing.toml', '--channel', 'cli']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual(INVALID_ROUTING_PROBLEMS);
  });

  it('usage errors are one line naming the option, exit 2', async () => {
    const base = ['route', 'explain', '--config', 'routing.toml'];
    await expectUsageError(['route', 'explain', '--channel', 'cli'], /required option '--config <file>' not specified/);
    await expectUsageError(base, /required option '--channel <channel>' not specified/);
    await expectUsageError([...base, '--channel', 'telegram', '--peer', '123'], /--peer "123": expected kind:id/);
    await expectUsageError([...base, '--channel', '!!'], /^signalyard: error: --channel: .*"!!"/);
    await expectUsageError([...base, '--channel', 'x', '--team', ' '], /--team: /);
    await expectUsageError(
      [...base, '--channel', 'x', '--thread', 't'],
      /--thread needs a group, channel or thread --peer/,
    );
    await expectUsageError(
      [...base, '--channel', 'x', '--bogus', 'u'],
      /unknown option '--bogus'; see 'signalyard route explain --help'$/m,
    );
    await expectUsageError(
      ['route', 'explain', '--config', 'nowhere.toml', '--channel', 'cli'],
      /cannot read "nowhere\.toml"/,
    );
  });

  it('route without a subcommand, or with an unknown one: one line, exit 2', async () => {
    await expectUsageError(
      ['route'],
      /^signalyard: error: missing subcommand: explain \(see 'signalyard route --help'\)$/m,
    );
    await expectUsageError(
      ['route', 'explian'],
      /unknown command 'explian' \(did you mean explain\?\); see 'signalyard route --help'/,
    );
  });

  it('help: route --help lists explain; route explain --help documents every option', async () => {
    const route = await cli(['route', '--help']);
    expect(route.code).toBe(0);
    expect(lines(route.stdout)[0]).toBe('Usage: signalyard route [options] [command]');
    expect(route.stdout).toContain('explain');
    expect((await cli(['help', 'route'])).stdout).toBe(route.stdout);
    const explain = await cli(['route', 'explain', '--help']);
    expect(lines(explain.stdout)[0]).toBe('Usage: signalyard route explain [options]');
    for (const flag of ['--config', '--channel', '--peer', '--account', '--guild', '--team', '--thread', '--json'])
      expect(explain.stdout).toContain(flag);
    expect((await cli(['--help'])).stdout).toMatch(/route\s+explain how an inbound message is routed/);
  });

  it('on a terminal the winner and the agent are bold; never coloured on a pipe', async () => {
    const args = ['route', 'explain', '--config', 'routing.toml', '--channel', 'telegram', '--peer', 'dm:1'];
    const tty = await cli(args, { tty: true });
    expect(tty.stdout).toContain('\u001b[1mgeneral\u001b[22m');
    expect(tty.stdout).toContain('\u001b[1mrouting.bindings[1] (agent general, channel tier)\u001b[22m');
    expect((await cli(args, { env: { FORCE_COLOR: '1' } })).stdout).not.toContain('\u001b[');
  });
});
