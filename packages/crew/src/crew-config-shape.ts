import { approvalPolicySchema, describeValue } from '@signalyard/core';
import { approvalPolicyKeys, snakeCaseApprovalPolicySchema } from '@signalyard/core/internal';
import * as z from 'zod';
import { SNAKE_KEYS, policySpelling, type CrewKeys } from './crew-config-keys.js';
import { isValidSignal } from './signal-matching.js';
import { BRACKET_WINDOW } from './signal-normalize.js';
import { HANDOFF_MODES, RESUME_AT, TOOL_NAME } from './transfer-tools.js';

// The shape of a crew config in one spelling: types, unknown keys, formats, positive limits.
// What no single field can check (references between agents, groups and signals) is
// crew-config-references.ts's job.

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
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    error: (issue) =>
      `expected ${values.map((v) => JSON.stringify(v)).join(' or ')}, got ${describeValue(issue.input)}`,
  });
const record = <T extends z.ZodType>(value: T) => z.record(z.string(), value, { error: expected('a mapping') });

/** The shape checks (types, unknown keys, formats, positive limits); cross-references are checked separately. @internal */
export function structuralSchema(k: CrewKeys) {
  const agent = mapping({
    [k.id]: nonEmpty('a non-empty agent id'),
    [k.name]: str().optional(),
    [k.description]: str().optional(),
    [k.systemPrompt]: str().optional(),
    [k.handoffTargets]: list(nonEmpty('an agent id')).optional(),
    [k.tools]: list(nonEmpty('a tool name')).optional(),
    [k.mcp]: list(
      mapping({
        server: nonEmpty('an MCP server name'),
        allow: list(nonEmpty('a tool name glob')).optional(),
        deny: list(nonEmpty('a tool name glob')).optional(),
        prefix: str().optional(),
      }),
    ).optional(),
  });
  const settings = mapping({
    [k.maxHandoffs]: positiveInteger().optional(),
    [k.maxRounds]: positiveInteger().optional(),
    [k.maxToolRounds]: positiveInteger().optional(),
    [k.maxHistoryMessages]: positiveInteger().optional(),
    [k.parallelTimeoutSeconds]: positiveSeconds().optional(),
    [k.hideSignals]: bool().optional(),
    [k.handoffMode]: oneOf(HANDOFF_MODES).optional(),
    [k.resumeAt]: oneOf(RESUME_AT).optional(),
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
    [k.tool]: str('a tool name')
      .regex(TOOL_NAME, {
        error: (issue) =>
          `invalid tool name ${describeValue(issue.input)}: expected 1 to 64 letters, digits, "_" or "-"`,
      })
      .optional(),
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

/** The keys allowed in the mapping at `path` (for the unknown-key message). @internal */
export function allowedKeys(path: readonly PropertyKey[], k: CrewKeys): readonly string[] {
  const [a, b, , d] = path;
  if (path.length === 0) return [k.entryPoint, k.agents, k.settings, k.routing, k.approvals];
  if (a === k.approvals) return approvalPolicyKeys(path.slice(1), policySpelling(k));
  if (a === k.agents && path.length === 2)
    return [k.id, k.name, k.description, k.systemPrompt, k.handoffTargets, k.tools, k.mcp];
  if (a === k.agents) return ['server', 'allow', 'deny', 'prefix'];
  if (a === k.settings)
    return [
      k.maxHandoffs,
      k.maxRounds,
      k.maxToolRounds,
      k.maxHistoryMessages,
      k.parallelTimeoutSeconds,
      k.hideSignals,
      k.handoffMode,
      k.resumeAt,
    ];
  if (path.length === 1) return [k.signals, k.agentBehaviors, k.parallelGroups];
  if (b === k.signals && d !== undefined) return [k.signal, k.target, k.description, k.tool];
  if (b === k.agentBehaviors) return [k.waitForSignal, k.isTerminal];
  return [k.agents, k.timeoutSeconds, k.waitForAll, k.nextAgent];
}

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
