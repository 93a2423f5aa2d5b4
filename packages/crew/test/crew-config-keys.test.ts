import { readFileSync } from 'node:fs';
import { parseCrewConfig } from '@signalyard/crew';
import { crewConfigKeyPaths } from '../src/crew-config-shape.js';
import { describe, expect, it } from 'vitest';

describe('crewConfigKeyPaths', () => {
  it('lists every key of crew.yaml, lists marked [] and maps marked *', () => {
    expect(crewConfigKeyPaths()).toEqual([
      'entry_point',
      'agents',
      'agents[].id',
      'agents[].name',
      'agents[].description',
      'agents[].system_prompt',
      'agents[].handoff_targets',
      'agents[].tools',
      'agents[].mcp',
      'agents[].mcp[].server',
      'agents[].mcp[].allow',
      'agents[].mcp[].deny',
      'agents[].mcp[].prefix',
      'settings',
      'settings.max_handoffs',
      'settings.max_rounds',
      'settings.max_tool_rounds',
      'settings.max_history_messages',
      'settings.parallel_timeout_seconds',
      'settings.hide_signals',
      'settings.handoff_mode',
      'settings.resume_at',
      'routing',
      'routing.signals',
      'routing.signals.*',
      'routing.signals.*[].signal',
      'routing.signals.*[].target',
      'routing.signals.*[].description',
      'routing.signals.*[].tool',
      'routing.agent_behaviors',
      'routing.agent_behaviors.*',
      'routing.agent_behaviors.*.wait_for_signal',
      'routing.agent_behaviors.*.is_terminal',
      'routing.parallel_groups',
      'routing.parallel_groups.*',
      'routing.parallel_groups.*.agents',
      'routing.parallel_groups.*.timeout_seconds',
      'routing.parallel_groups.*.wait_for_all',
      'routing.parallel_groups.*.next_agent',
      'approvals',
      'approvals.rules',
      'approvals.rules[].tool',
      'approvals.rules[].when',
      'approvals.rules[].when[].path',
      'approvals.rules[].when[].equals',
      'approvals.rules[].when[].in',
      'approvals.rules[].when[].gt',
      'approvals.rules[].when[].gte',
      'approvals.rules[].when[].lt',
      'approvals.rules[].when[].lte',
      'approvals.rules[].when[].starts_with',
      'approvals.rules[].when[].ends_with',
      'approvals.rules[].when[].includes',
      'approvals.rules[].when[].exists',
      'approvals.rules[].decision',
      'approvals.rules[].reason',
      'approvals.default',
    ]);
  });

  it('agrees with the parser: a key not listed is refused', () => {
    expect(() => parseCrewConfig('entry_point: a\nagents: [{ id: a, sytem_prompt: hi }]\n')).toThrow(/sytem_prompt/);
  });
});

describe('docs/configuration.md, section crew.yaml', () => {
  const reference = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
  const section = reference.slice(reference.indexOf('\n## crew.yaml\n'), reference.indexOf('\n## Routing TOML\n'));

  it.each(crewConfigKeyPaths())('documents the crew.yaml key %s', (path) => {
    expect(section).toContain(`| \`${path}\` |`);
  });

  it('documents nothing the schema does not accept', () => {
    const known = new Set(crewConfigKeyPaths());
    const documented = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    expect(documented.length).toBeGreaterThan(0);
    expect(documented.filter((k) => k !== undefined && !known.has(k))).toEqual([]);
  });
});
