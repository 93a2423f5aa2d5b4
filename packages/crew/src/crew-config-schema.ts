import { approvalPolicySchema, describeValue, type ApprovalPolicy } from '@signalyard/core';
import {
  approvalPolicyKeys,
  approvalPolicyProblems,
  formatConfigPath,
  reservedNameProblem,
  snakeCaseApprovalPolicySchema,
} from '@signalyard/core/internal';
import * as z from 'zod';
import {
  DEFAULT_CREW_SETTINGS,
  type AgentBehavior,
  type CrewAgentConfig,
  type CrewConfig,
  type CrewSettings,
  type ParallelGroupConfig,
  type RoutingSignal,
} from './crew-config.js';
import { isValidSignal } from './signal-matching.js';
import { BRACKET_WINDOW, normalizeBracketSpan } from './signal-normalize.js';

// One schema builder, two spellings: crew.yaml's snake_case keys (the exported
// `crewConfigSchema`) and the camelCase keys of a crew written in code (`resolveCrewConfig`).
// Same rules, same messages; only the key names differ.

/** The key names of one spelling, indexed by their camelCase name. */
interface CrewKeys {
  readonly entryPoint: string;
  readonly agents: string;
  readonly settings: string;
  readonly routing: string;
  readonly approvals: string;
  readonly id: string;
  readonly name: string;
  readonly systemPrompt: string;
  readonly handoffTargets: string;
  readonly tools: string;
  readonly maxHandoffs: string;
  readonly maxRounds: string;
  readonly maxToolRounds: string;
  readonly maxHistoryMessages: string;
  readonly parallelTimeoutSeconds: string;
  readonly hideSignals: string;
  readonly signals: string;
  readonly agentBehaviors: string;
  readonly parallelGroups: string;
  readonly signal: string;
  readonly target: string;
  readonly description: string;
  readonly waitForSignal: string;
  readonly isTerminal: string;
  readonly timeoutSeconds: string;
  readonly waitForAll: string;
  readonly nextAgent: string;
}

const CAMEL_KEYS: CrewKeys = Object.freeze({
  entryPoint: 'entryPoint',
  agents: 'agents',
  settings: 'settings',
  routing: 'routing',
  approvals: 'approvals',
  id: 'id',
  name: 'name',
  systemPrompt: 'systemPrompt',
  handoffTargets: 'handoffTargets',
  tools: 'tools',
  maxHandoffs: 'maxHandoffs',
  maxRounds: 'maxRounds',
  maxToolRounds: 'maxToolRounds',
  maxHistoryMessages: 'maxHistoryMessages',
  parallelTimeoutSeconds: 'parallelTimeoutSeconds',
  hideSignals: 'hideSignals',
  signals: 'signals',
  agentBehaviors: 'agentBehaviors',
  parallelGroups: 'parallelGroups',
  signal: 'signal',
  target: 'target',
  description: 'description',
  waitForSignal: 'waitForSignal',
  isTerminal: 'isTerminal',
  timeoutSeconds: 'timeoutSeconds',
  waitForAll: 'waitForAll',
  nextAgent: 'nextAgent',
});

const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const SNAKE_KEYS: CrewKeys = Object.freeze(
  Object.fromEntries(
    (Object.entries(CAMEL_KEYS) as [string, string][]).map(([k, v]) => [k, snake(v)]),
  ) as unknown as CrewKeys,
);

/** Marks an issue whose line is that of the offending key (not its value). */
export const AT_KEY = 'key';

const expected =
  (what: string) =>
  (issue: { readonly input?: unknown }): string =>
    issue.input === undefined ? 'required' : `expected ${what}, got ${describeValue(issue.input)}`;

const str = (what = 'a string') => z.string({ error: expected(what) });
const nonEmpty = (what = 'a non-empty string') => str(what).min(1, { error: `expected ${what}, got ""` });
const positiveInteger = () =>
  z.number({ error: expected('a positive integer') }).refine((v) => Number.isSafeInteger(v) && v > 0, {
    error: (issue) => `expected a positive integer, got ${describeValue(issue.input)}`,
  });
const positiveSeconds = () =>
  z.number({ error: expected('a positive number of seconds') }).refine((v) => v > 0, {
    error: (issue) => `expected a positive number of seconds, got ${describeValue(issue.input)}`,
  });
const bool = () => z.boolean({ error: expected('true or false') });
const list = <T extends z.ZodType>(item: T) => z.array(item, { error: expected('a list') });
const mapping = <S extends z.core.$ZodLooseShape>(shape: S) => z.strictObject(shape, { error: expected('a mapping') });
const record = <T extends z.ZodType>(value: T) => z.record(z.string(), value, { error: expected('a mapping') });

/** The shape checks (types, unknown keys, formats, positive limits); cross-references are checked separately. */
function structuralSchema(k: CrewKeys) {
  const agent = mapping({
    [k.id]: nonEmpty('a non-empty agent id'),
    [k.name]: str().optional(),
    [k.systemPrompt]: str().optional(),
    [k.handoffTargets]: list(nonEmpty('an agent id')).optional(),
    [k.tools]: list(nonEmpty('a tool name')).optional(),
  });
  const settings = mapping({
    [k.maxHandoffs]: positiveInteger().optional(),
    [k.maxRounds]: positiveInteger().optional(),
    [k.maxToolRounds]: positiveInteger().optional(),
    [k.maxHistoryMessages]: positiveInteger().optional(),
    [k.parallelTimeoutSeconds]: positiveSeconds().optional(),
    [k.hideSignals]: bool().optional(),
  });
  const signal = mapping({
    [k.signal]: str('a signal such as "[DONE]"')
      .refine(isValidSignal, {
        error: (issue) =>
          `invalid signal ${describeValue(issue.input)}: expected "[NAME]" (starts with "[", ends with "]", no other bracket inside, not blank)`,
      })
      .refine((s) => !isValidSignal(s) || s.length <= BRACKET_WINDOW, {
        error: (issue) =>
          `signal ${describeValue(issue.input)} is ${(issue.input as string).length} UTF-16 code units long: expected at most ${BRACKET_WINDOW}`,
      }),
    [k.target]: str('a string: an agent id, a parallel group, or "" to end the run'),
    [k.description]: str().optional(),
  });
  const behavior = mapping({
    [k.waitForSignal]: bool().optional(),
    [k.isTerminal]: bool().optional(),
  });
  const group = mapping({
    [k.agents]: list(nonEmpty('an agent id')).min(1, { error: 'a parallel group needs at least one agent' }),
    [k.timeoutSeconds]: positiveSeconds().optional(),
    [k.waitForAll]: bool().optional(),
    [k.nextAgent]: nonEmpty('an agent id').optional(),
  });
  const routing = mapping({
    [k.signals]: record(list(signal)).optional(),
    [k.agentBehaviors]: record(behavior).optional(),
    [k.parallelGroups]: record(group).optional(),
  });
  return mapping({
    [k.entryPoint]: nonEmpty('an agent id'),
    [k.agents]: list(agent).min(1, { error: 'a crew needs at least one agent' }),
    [k.settings]: settings.optional(),
    [k.routing]: routing.optional(),
    // core's approval policy schema, in this spelling (crew.yaml: `starts_with`, `ends_with`)
    [k.approvals]: (k === SNAKE_KEYS ? snakeCaseApprovalPolicySchema : approvalPolicySchema).optional(),
  });
}

/** The keys allowed in the mapping at `path` (for the unknown-key message). */
function allowedKeys(path: readonly PropertyKey[], k: CrewKeys): readonly string[] {
  const [a, b, , d] = path;
  if (path.length === 0) return [k.entryPoint, k.agents, k.settings, k.routing, k.approvals];
  if (a === k.approvals) return approvalPolicyKeys(path.slice(1), k === SNAKE_KEYS ? 'snake_case' : 'camelCase');
  if (a === k.agents && path.length === 2) return [k.id, k.name, k.systemPrompt, k.handoffTargets, k.tools];
  if (a === k.settings)
    return [k.maxHandoffs, k.maxRounds, k.maxToolRounds, k.maxHistoryMessages, k.parallelTimeoutSeconds, k.hideSignals];
  if (path.length === 1) return [k.signals, k.agentBehaviors, k.parallelGroups];
  if (b === k.signals && d !== undefined) return [k.signal, k.target, k.description];
  if (b === k.agentBehaviors) return [k.waitForSignal, k.isTerminal];
  return [k.agents, k.timeoutSeconds, k.waitForAll, k.nextAgent];
}

// ---------------------------------------------------------------------------- cross references

interface CrossProblem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly atKey?: boolean;
}

type Obj = Readonly<Record<string, unknown>>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: Obj, key: string): unknown => (Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined);

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
 */
function crossReferences(data: unknown, k: CrewKeys): CrossProblem[] {
  const problems: CrossProblem[] = [];
  if (!isObj(data)) return problems;
  const routing = own(data, k.routing);
  const groups = isObj(routing) ? own(routing, k.parallelGroups) : undefined;
  if (isObj(groups)) {
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
    groupNames: new Set(isObj(groups) ? Object.keys(groups) : []),
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
    if (!isObj(agent)) return;
    const targets = own(agent, k.handoffTargets);
    if (Array.isArray(targets))
      targets.forEach((t: unknown, j) => {
        refs.checkAgent(t, [k.agents, i, k.handoffTargets, j]);
      });
  });
  if (!isObj(routing)) return problems;
  const signals = own(routing, k.signals);
  if (isObj(signals)) for (const agentId of Object.keys(signals)) signalRefs(refs, agentId, signals[agentId]);
  const behaviors = own(routing, k.agentBehaviors);
  if (isObj(behaviors)) {
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
  if (isObj(groups)) for (const name of Object.keys(groups)) groupRefs(refs, name, groups[name]);
  return problems;
}

/** The agent ids by first index; a duplicate id is a problem. */
function agentIds(agents: readonly unknown[], k: CrewKeys, problems: CrossProblem[]): Map<string, number> {
  const ids = new Map<string, number>();
  agents.forEach((agent: unknown, i) => {
    if (!isObj(agent)) return;
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
    if (!isObj(entry)) return;
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
  if (!isObj(group)) return;
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

// ------------------------------------------------------------------------------- resolution

/** Every config this module produced (validated and frozen): resolving one again is free. */
const resolvedConfigs = new WeakSet<object>();

/** True when `config` came out of a crew schema (so it needs no validation). */
export function isResolvedCrewConfig(config: unknown): config is CrewConfig {
  return typeof config === 'object' && config !== null && resolvedConfigs.has(config);
}

const frozenList = (value: unknown): readonly string[] =>
  Object.freeze(Array.isArray(value) ? (value as string[]).slice() : []);
function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** Builds the frozen camelCase {@link CrewConfig} from data the schema has accepted. */
function resolve(data: Obj, k: CrewKeys): CrewConfig {
  const agents = (own(data, k.agents) as Obj[]).map((a): CrewAgentConfig => {
    const name = own(a, k.name) as string | undefined;
    const systemPrompt = own(a, k.systemPrompt) as string | undefined;
    return Object.freeze({
      id: own(a, k.id) as string,
      ...(name === undefined ? {} : { name }),
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
      handoffTargets: frozenList(own(a, k.handoffTargets)),
      tools: frozenList(own(a, k.tools)),
    });
  });
  const s = (own(data, k.settings) ?? {}) as Obj;
  const setting = (key: Exclude<keyof CrewSettings, 'hideSignals'>): number =>
    (own(s, k[key]) as number | undefined) ?? DEFAULT_CREW_SETTINGS[key];
  const settings: CrewSettings = Object.freeze({
    maxHandoffs: setting('maxHandoffs'),
    maxRounds: setting('maxRounds'),
    maxToolRounds: setting('maxToolRounds'),
    maxHistoryMessages: setting('maxHistoryMessages'),
    parallelTimeoutSeconds: setting('parallelTimeoutSeconds'),
    hideSignals: (own(s, k.hideSignals) as boolean | undefined) ?? DEFAULT_CREW_SETTINGS.hideSignals,
  });

  const r = (own(data, k.routing) ?? {}) as Obj;
  const signals = dict<readonly RoutingSignal[]>();
  for (const [agentId, entries] of Object.entries((own(r, k.signals) ?? {}) as Obj)) {
    signals[agentId] = Object.freeze(
      (entries as Obj[]).map((e): RoutingSignal => {
        const description = own(e, k.description) as string | undefined;
        return Object.freeze({
          signal: own(e, k.signal) as string,
          target: own(e, k.target) as string,
          ...(description === undefined ? {} : { description }),
        });
      }),
    );
  }
  const agentBehaviors = dict<AgentBehavior>();
  for (const [agentId, b] of Object.entries((own(r, k.agentBehaviors) ?? {}) as Obj)) {
    agentBehaviors[agentId] = Object.freeze({
      waitForSignal: (own(b as Obj, k.waitForSignal) as boolean | undefined) ?? false,
      isTerminal: (own(b as Obj, k.isTerminal) as boolean | undefined) ?? false,
    });
  }
  const parallelGroups = dict<ParallelGroupConfig>();
  for (const [name, g] of Object.entries((own(r, k.parallelGroups) ?? {}) as Obj)) {
    const nextAgent = own(g as Obj, k.nextAgent) as string | undefined;
    parallelGroups[name] = Object.freeze({
      agents: frozenList(own(g as Obj, k.agents)),
      timeoutSeconds: (own(g as Obj, k.timeoutSeconds) as number | undefined) ?? settings.parallelTimeoutSeconds,
      waitForAll: (own(g as Obj, k.waitForAll) as boolean | undefined) ?? true,
      ...(nextAgent === undefined ? {} : { nextAgent }),
    });
  }

  const approvals = approvalsOf(own(data, k.approvals), k);
  const config: CrewConfig = Object.freeze({
    entryPoint: own(data, k.entryPoint) as string,
    agents: Object.freeze(agents),
    settings,
    routing: Object.freeze({
      signals: Object.freeze(signals),
      agentBehaviors: Object.freeze(agentBehaviors),
      parallelGroups: Object.freeze(parallelGroups),
    }),
    ...(approvals === undefined ? {} : { approvals }),
  });
  resolvedConfigs.add(config);
  return config;
}

/** The validated, deep-frozen camelCase policy of an accepted `approvals` section (absent: `undefined`). */
function approvalsOf(value: unknown, k: CrewKeys): ApprovalPolicy | undefined {
  if (value === undefined) return undefined;
  return approvalPolicyProblems(value, k === SNAKE_KEYS ? 'snake_case' : 'camelCase').policy;
}

/** Builds the full schema (shape, unknown keys, cross references, then the camelCase result) for one spelling. */
function buildCrewSchema(k: CrewKeys): z.ZodType<CrewConfig> {
  const structural = structuralSchema(k);
  return z
    .unknown()
    .superRefine((data, ctx) => {
      const result = structural.safeParse(data);
      if (!result.success) {
        for (const issue of result.error.issues) {
          if (issue.code === 'unrecognized_keys') {
            const allowed = allowedKeys(issue.path, k);
            for (const key of issue.keys) {
              ctx.addIssue({
                code: 'custom',
                path: [...issue.path, key],
                message: `unknown key ${JSON.stringify(key)} (expected ${allowed.join(', ')})`,
                params: { at: AT_KEY },
              });
            }
          } else {
            ctx.addIssue({ ...issue });
          }
        }
      }
      for (const p of crossReferences(data, k)) {
        ctx.addIssue({
          code: 'custom',
          path: [...p.path],
          message: p.message,
          ...(p.atKey === true ? { params: { at: AT_KEY } } : {}),
        });
      }
    })
    .transform((data) => resolve(data as Obj, k));
}

/**
 * The zod schema of a crew.yaml document (snake_case keys, as parsed from YAML or JSON); its
 * output is the camelCase {@link CrewConfig} with every default filled in.
 *
 * It checks, all at once: unknown keys at every level; no agents; duplicate agent ids; an
 * unknown `entry_point`; invalid signal formats (`isValidSignal`) and signals longer than 200
 * UTF-16 code units (so a stream's hold-back window covers a whole marker); duplicate signals within one
 * agent (signals that normalise alike match the same replies, so they count as duplicates);
 * non-empty targets that name neither an agent nor a parallel group; `routing.signals` and
 * `agent_behaviors` keys, `handoff_targets`, group members and `next_agent` naming unknown
 * agents; empty groups, a member listed twice, a group named like an agent; non-positive
 * limits and timeouts; and every type. Issues at an unknown or unknown-agent key carry
 * `params: { at: 'key' }`.
 *
 * Most code wants {@link parseCrewConfig} (which adds line numbers and throws `ConfigError`);
 * use the schema to validate data from elsewhere, or to compose it into a larger schema.
 *
 * @example
 * ```ts
 * const result = crewConfigSchema.safeParse(JSON.parse(text));
 * if (result.success) result.data.settings.maxHandoffs;   // 5 unless set
 * ```
 */
export const crewConfigSchema: z.ZodType<CrewConfig> = buildCrewSchema(SNAKE_KEYS);

/** The same rules over the camelCase keys of a crew written in code. */
export const crewConfigInputSchema: z.ZodType<CrewConfig> = buildCrewSchema(CAMEL_KEYS);

/**
 * Every key of crew.yaml, as dotted paths from the top of the file: `[]` marks list items, `*`
 * the entries of a map keyed by agent or group id — e.g. `entry_point`, `agents[].system_prompt`,
 * `routing.signals.*[].target`, `routing.parallel_groups.*.wait_for_all`. Derived from the schema
 * that validates the file, for tooling and documentation (the project's configuration reference
 * is tested against it).
 */
export function crewConfigKeyPaths(): readonly string[] {
  const out: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (typeof node !== 'object' || node === null) return;
    const n = node as {
      properties?: Record<string, unknown>;
      items?: unknown;
      additionalProperties?: unknown;
      anyOf?: unknown[];
    };
    for (const option of n.anyOf ?? []) walk(option, path);
    if (n.properties !== undefined) {
      for (const [key, child] of Object.entries(n.properties)) {
        const p = path === '' ? key : `${path}.${key}`;
        out.push(p);
        walk(child, p);
      }
    }
    if (n.items !== undefined) walk(n.items, `${path}[]`);
    if (typeof n.additionalProperties === 'object') {
      out.push(`${path}.*`);
      walk(n.additionalProperties, `${path}.*`);
    }
  };
  walk(z.toJSONSchema(structuralSchema(SNAKE_KEYS), { io: 'input', unrepresentable: 'any' }), '');
  return [...new Set(out)];
}
