import { readFileSync } from 'node:fs';
import { parseRoutingConfig, routingConfigSchema } from '@signalyard/sessions';
import { routingTomlKeyPaths } from '../src/routing-toml.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

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

/** The camelCase keys the code form accepts, from the zod schema itself. */
function schemaKeys(schema: z.ZodType): string[] {
  const out = new Set<string>();
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const n = node as {
      properties?: Record<string, unknown>;
      items?: unknown;
      additionalProperties?: unknown;
      anyOf?: unknown[];
    };
    for (const [key, child] of Object.entries(n.properties ?? {})) {
      out.add(key);
      walk(child);
    }
    walk(n.items);
    walk(n.additionalProperties);
    for (const o of n.anyOf ?? []) walk(o);
  };
  walk(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
  return [...out];
}

describe('docs/configuration.md, section Routing TOML', () => {
  const reference = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
  const start = reference.indexOf('\n## Routing TOML\n');
  const next = reference.indexOf('\n## ', start + 1);
  const section = reference.slice(start, next === -1 ? undefined : next);

  it.each(routingTomlKeyPaths())('documents the routing TOML key %s', (path) => {
    expect(section).toContain(`| \`${path}\` |`);
  });

  it.each(schemaKeys(routingConfigSchema))(
    'documents the routing key %s of the code form (routingConfigSchema)',
    (key) => {
      expect(section).toContain(`\`${key}\``);
    },
  );

  it('documents nothing the schema does not accept', () => {
    const known = new Set(routingTomlKeyPaths());
    const documented = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    expect(documented.length).toBeGreaterThan(0);
    expect(documented.filter((k) => k !== undefined && !known.has(k))).toEqual([]);
  });
});
