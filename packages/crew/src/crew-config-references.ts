import { formatConfigPath, isRecord, reservedNameProblem } from '@signalyard/core/internal';
import { own, type CrewKeys } from './crew-config-keys.js';
import { isValidSignal } from './signal-matching.js';
import { normalizeBracketSpan } from './signal-normalize.js';
import { TOOL_NAME, transferToolName } from './transfer-tools.js';

// The checks between fields of a crew config: agent ids, the agents and groups that signals,
// behaviours, handoff targets and groups refer to, duplicate signals.

/** A problem the cross-reference checks found (`atKey`: its line is the key's, not the value's). @internal */
export interface CrossProblem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly atKey?: boolean;
}

/** `"a", "b", "c"` (at most 12 names). */
function names(list: Iterable<string>): string {
  const all = [...list];
  const shown = all.slice(0, 12).map((s) => JSON.stringify(s));
  if (all.length > 12) shown.push(`… ${all.length - 12} more`);
  return shown.length === 0 ? 'none' : shown.join(', ');
}

/** What the cross-reference checks share: the keys, the agent ids and group names, the problems found. */
interface Refs {
  readonly k: CrewKeys;
  readonly ids: ReadonlyMap<string, number>;
  readonly groupNames: ReadonlySet<string>;
  readonly agentList: string;
  readonly problems: CrossProblem[];
  checkAgent(value: unknown, path: readonly PropertyKey[], what?: string): void;
}

/**
 * Checks what no single field can: duplicate agent ids, references to agents and groups,
 * duplicate signals. Tolerates any malformed shape (those problems are the structural
 * schema's), so every problem is reported in one pass.
 * @internal
 */
export function crossReferences(data: unknown, k: CrewKeys): CrossProblem[] {
  const problems: CrossProblem[] = [];
  if (!isRecord(data)) return problems;
  const routing = own(data, k.routing);
  const groups = isRecord(routing) ? own(routing, k.parallelGroups) : undefined;
  if (isRecord(groups)) {
    // The routing TOML's rule for names declared as keys: no `__proto__`, no `constructor`.
    for (const name of Object.keys(groups)) {
      const reserved = reservedNameProblem(name, 'a parallel group name');
      if (reserved !== undefined)
        problems.push({ path: [k.routing, k.parallelGroups, name], message: reserved, atKey: true });
    }
  }
  const agents = own(data, k.agents);
  if (!Array.isArray(agents)) return problems; // nothing to check references against
  const ids = agentIds(agents, k, problems);
  // With no usable agent, every reference would be "unknown": the missing agents are the problem.
  if (ids.size === 0) return problems;
  const agentList = `agents: ${names(ids.keys())}`;
  const refs: Refs = {
    k,
    ids,
    groupNames: new Set(isRecord(groups) ? Object.keys(groups) : []),
    agentList,
    problems,
    checkAgent: (value, path, what = 'agent') => {
      if (typeof value === 'string' && value !== '' && !ids.has(value)) {
        problems.push({ path, message: `unknown ${what} ${JSON.stringify(value)} (${agentList})` });
      }
    },
  };
  refs.checkAgent(own(data, k.entryPoint), [k.entryPoint]);
  agents.forEach((agent: unknown, i) => {
    if (!isRecord(agent)) return;
    const targets = own(agent, k.handoffTargets);
    if (Array.isArray(targets))
      targets.forEach((t: unknown, j) => {
        refs.checkAgent(t, [k.agents, i, k.handoffTargets, j]);
      });
  });
  if (!isRecord(routing)) return problems;
  const signals = own(routing, k.signals);
  if (isRecord(signals)) for (const agentId of Object.keys(signals)) signalRefs(refs, agentId, signals[agentId]);
  const behaviors = own(routing, k.agentBehaviors);
  if (isRecord(behaviors)) {
    for (const agentId of Object.keys(behaviors)) {
      if (!ids.has(agentId)) {
        problems.push({
          path: [k.routing, k.agentBehaviors, agentId],
          message: `${JSON.stringify(agentId)} is not an agent (${agentList})`,
          atKey: true,
        });
      }
    }
  }
  if (isRecord(groups)) for (const name of Object.keys(groups)) groupRefs(refs, name, groups[name]);
  const settings = own(data, k.settings);
  const mode = isRecord(settings) ? own(settings, k.handoffMode) : undefined;
  if (isRecord(signals) && (mode === 'tool' || mode === 'both')) {
    for (const agentId of Object.keys(signals)) {
      const index = ids.get(agentId);
      const agent: unknown = index === undefined ? undefined : agents[index];
      transferRefs(refs, agentId, signals[agentId], isRecord(agent) ? toolNamesOf(agent, k) : []);
    }
  }
  return problems;
}

/** The names in an agent's `tools` list (the strings among them). */
function toolNamesOf(agent: Readonly<Record<string, unknown>>, k: CrewKeys): string[] {
  const tools = own(agent, k.tools);
  return Array.isArray(tools) ? tools.filter((t): t is string => typeof t === 'string') : [];
}

/**
 * With transfer tools offered (`handoff_mode: tool | both`): each routing signal of one agent
 * gives a tool name that providers accept, no two signals of the agent give the same name, and
 * no transfer tool is named like one of the agent's own tools (`ownTools`: its `tools` list;
 * tools an agent gets from elsewhere, such as an MCP server, join this list).
 */
function transferRefs(refs: Refs, agentId: string, entries: unknown, ownTools: readonly string[]): void {
  const { k, problems } = refs;
  if (!Array.isArray(entries)) return;
  const base = [k.routing, k.signals, agentId];
  const seen = new Map<string, { index: number; signal: unknown }>();
  entries.forEach((entry: unknown, j) => {
    if (!isRecord(entry)) return;
    const target = own(entry, k.target);
    const tool = own(entry, k.tool);
    if (typeof target !== 'string' || (tool !== undefined && typeof tool !== 'string')) return;
    const signal = own(entry, k.signal);
    const name = transferToolName({ target, tool });
    const at = [...base, j, tool === undefined ? k.target : k.tool];
    const which = `signal ${JSON.stringify(signal)} of agent ${JSON.stringify(agentId)}`;
    if (!TOOL_NAME.test(name)) {
      // A `tool` of the wrong form is the shape's problem; a generated name is this check's.
      if (tool === undefined)
        problems.push({
          path: at,
          message: `${which} would be offered as the transfer tool ${JSON.stringify(name)}, which is not a valid tool name (1 to 64 letters, digits, "_" or "-"): give the signal a ${k.tool} name`,
        });
      return;
    }
    const first = seen.get(name);
    if (first !== undefined) {
      problems.push({
        path: at,
        message: `${which} would be offered as the transfer tool ${JSON.stringify(name)}, like signal ${JSON.stringify(first.signal)} at ${formatConfigPath([...base, first.index])}: give one of them a different ${k.tool} name`,
      });
      return;
    }
    seen.set(name, { index: j, signal });
    if (ownTools.includes(name))
      problems.push({
        path: at,
        message: `${which} would be offered as the transfer tool ${JSON.stringify(name)}, which is also the name of one of the agent's own tools: give the signal a different ${k.tool} name`,
      });
  });
}

/** The agent ids by first index; a duplicate id is a problem. */
function agentIds(agents: readonly unknown[], k: CrewKeys, problems: CrossProblem[]): Map<string, number> {
  const ids = new Map<string, number>();
  agents.forEach((agent: unknown, i) => {
    if (!isRecord(agent)) return;
    const id = own(agent, k.id);
    if (typeof id !== 'string' && typeof id !== 'number' && typeof id !== 'boolean') return;
    const key = String(id); // a mistyped id is the schema's problem; don't cascade it into references
    const first = ids.get(key);
    if (first === undefined) ids.set(key, i);
    else
      problems.push({
        path: [k.agents, i, k.id],
        message: `duplicate agent id ${JSON.stringify(key)} (already used by ${formatConfigPath([k.agents, first])})`,
      });
  });
  return ids;
}

/** One agent's signal list: the agent exists, no signal twice, every target exists. */
function signalRefs(refs: Refs, agentId: string, entries: unknown): void {
  const { k, ids, groupNames, problems } = refs;
  const base = [k.routing, k.signals, agentId];
  if (!ids.has(agentId)) {
    problems.push({
      path: base,
      message: `${JSON.stringify(agentId)} is not an agent (${refs.agentList})`,
      atKey: true,
    });
  }
  if (!Array.isArray(entries)) return;
  const seen = new Map<string, { index: number; signal: string }>();
  entries.forEach((entry: unknown, j) => {
    if (!isRecord(entry)) return;
    const signal = own(entry, k.signal);
    if (typeof signal === 'string' && isValidSignal(signal)) {
      const key = normalizeBracketSpan(signal);
      const first = seen.get(key);
      if (first === undefined) seen.set(key, { index: j, signal });
      else {
        const where = formatConfigPath([...base, first.index]);
        problems.push({
          path: [...base, j, k.signal],
          message:
            first.signal === signal
              ? `duplicate signal ${JSON.stringify(signal)} (already at ${where})`
              : `duplicate signal ${JSON.stringify(signal)}: it matches the same replies as ${JSON.stringify(first.signal)} at ${where}`,
        });
      }
    }
    const target = own(entry, k.target);
    if (typeof target === 'string' && target !== '' && !ids.has(target) && !groupNames.has(target)) {
      problems.push({
        path: [...base, j, k.target],
        message: `unknown target ${JSON.stringify(target)}: expected an agent (${names(ids.keys())}), a parallel group (${names(groupNames)}), or "" to end the run`,
      });
    }
  });
}

/** One parallel group: not named like an agent, members exist and appear once, next_agent exists. */
function groupRefs(refs: Refs, name: string, group: unknown): void {
  const { k, ids, problems } = refs;
  const base = [k.routing, k.parallelGroups, name];
  if (ids.has(name)) {
    problems.push({
      path: base,
      message: `parallel group ${JSON.stringify(name)} has the name of an agent: a signal target naming it would be ambiguous`,
      atKey: true,
    });
  }
  if (!isRecord(group)) return;
  const members = own(group, k.agents);
  if (Array.isArray(members)) {
    const seen = new Set<string>();
    members.forEach((m: unknown, j) => {
      refs.checkAgent(m, [...base, k.agents, j]);
      if (typeof m !== 'string') return;
      if (seen.has(m))
        problems.push({
          path: [...base, k.agents, j],
          message: `agent ${JSON.stringify(m)} is listed twice in this group`,
        });
      seen.add(m);
    });
  }
  refs.checkAgent(own(group, k.nextAgent), [...base, k.nextAgent]);
}
