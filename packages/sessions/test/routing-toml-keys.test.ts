import { parseRoutingConfig, routingTomlKeyPaths } from '@signalyard/sessions';
import { describe, expect, it } from 'vitest';

describe('routingTomlKeyPaths', () => {
  it('lists every key of the routing TOML, tables, arrays of tables and maps marked', () => {
    expect(routingTomlKeyPaths()).toEqual([
      'routing',
      'routing.default_agent',
      'routing.session',
      'routing.session.dm_scope',
      'routing.session.case_sensitive_channels',
      'routing.session.identity_links',
      'routing.session.identity_links.*',
      'routing.bindings',
      'routing.bindings[]',
      'routing.bindings[].agent_id',
      'routing.bindings[].match',
      'routing.bindings[].match.channel',
      'routing.bindings[].match.account_id',
      'routing.bindings[].match.peer',
      'routing.bindings[].match.peer.kind',
      'routing.bindings[].match.peer.id',
      'routing.bindings[].match.guild_id',
      'routing.bindings[].match.team_id',
    ]);
  });

  it('agrees with the parser: a file using every listed key parses, a key not listed is refused', () => {
    const all = `
[routing]
default_agent = "main"
[routing.session]
dm_scope = "per-peer"
case_sensitive_channels = ["matrix"]
[routing.session.identity_links]
john = ["telegram:1"]
[[routing.bindings]]
agent_id = "main"
[routing.bindings.match]
channel = "telegram"
account_id = "a"
guild_id = "g"
team_id = "t"
[routing.bindings.match.peer]
kind = "dm"
id = "1"
`;
    expect(parseRoutingConfig(all).bindings).toHaveLength(1);
    expect(() => parseRoutingConfig(`[routing]\ndefault_agnet = "x"\n`)).toThrow(/default_agnet/);
  });
});
