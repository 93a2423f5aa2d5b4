import { crewConfigKeyPaths, parseCrewConfig } from '@signalyard/crew';
import { describe, expect, it } from 'vitest';

describe('crewConfigKeyPaths', () => {
  it('lists every key of crew.yaml, lists marked [] and maps marked *', () => {
    expect(crewConfigKeyPaths()).toEqual([
      'entry_point',
      'agents',
      'agents[].id',
      'agents[].name',
      'agents[].system_prompt',
      'agents[].handoff_targets',
      'agents[].tools',
      'settings',
      'settings.max_handoffs',
      'settings.max_rounds',
      'settings.max_tool_rounds',
      'settings.max_history_messages',
      'settings.parallel_timeout_seconds',
      'routing',
      'routing.signals',
      'routing.signals.*',
      'routing.signals.*[].signal',
      'routing.signals.*[].target',
      'routing.signals.*[].description',
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
    ]);
  });

  it('agrees with the parser: a key not listed is refused', () => {
    expect(() => parseCrewConfig('entry_point: a\nagents: [{ id: a, sytem_prompt: hi }]\n')).toThrow(/sytem_prompt/);
  });
});
