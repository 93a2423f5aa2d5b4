import * as z from 'zod';
import type { ApprovalPolicy } from '../approval.js';
import { argPathProblem } from '../arg-condition.js';
import type { ConfigProblem } from '../errors/config-error.js';
import { describeValue } from '../signal.js';
import { deepFreeze } from './values.js';

/** Policies made by a policy schema: deep-frozen and valid, so `decideApproval` need not check them again. */
const checkedPolicies = new WeakSet<object>();

/** True when `policy` came out of a policy schema (it is deep-frozen and valid). @internal */
export function isCheckedPolicy(policy: object): boolean {
  return checkedPolicies.has(policy);
}

/** How a policy's keys are spelled: in code (camelCase) or in crew.yaml (snake_case). @internal */
export type PolicySpelling = 'camelCase' | 'snake_case';

/** The camelCase key of each condition test, with its spelling in crew.yaml. */
const CONDITION_TESTS: readonly (readonly [camel: string, snake: string])[] = [
  ['equals', 'equals'],
  ['in', 'in'],
  ['gt', 'gt'],
  ['gte', 'gte'],
  ['lt', 'lt'],
  ['lte', 'lte'],
  ['startsWith', 'starts_with'],
  ['endsWith', 'ends_with'],
  ['includes', 'includes'],
  ['exists', 'exists'],
];
const POLICY_KEYS = ['rules', 'default'];
const RULE_KEYS = ['name', 'tool', 'when', 'decision', 'reason'];
const conditionKeys = (spelling: PolicySpelling): string[] => [
  'path',
  ...CONDITION_TESTS.map(([camel, snake]) => (spelling === 'camelCase' ? camel : snake)),
];

const DECISIONS = ['allow', 'ask', 'deny'] as const;

const invalid =
  (label: string, expected: string) =>
  (issue: { input?: unknown }): string =>
    `Invalid ${label} ${describeValue(issue.input)}: expected ${expected}`;

const strict = (name: string, keys: readonly string[]) => ({
  error: (issue: { code?: string; keys?: readonly string[]; input?: unknown }): string =>
    issue.code === 'unrecognized_keys'
      ? `unknown key${issue.keys?.length === 1 ? '' : 's'} ${(issue.keys ?? []).map((k) => JSON.stringify(k)).join(', ')} in ${name} (expected ${keys.join(', ')})`
      : `Invalid ${name} ${describeValue(issue.input)}: expected an object { ${keys.join(', ')} }`,
});

/** Why `value` is not a JSON value (null, boolean, finite number, string, list, plain object), or `undefined`. */
function jsonProblem(value: unknown, depth = 0): string | undefined {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${value} is not a JSON number`;
  if (typeof value !== 'object' || depth > 64) return `${describeValue(value)} is not a JSON value`;
  if (Array.isArray(value)) {
    for (const item of value as readonly unknown[]) {
      const problem = jsonProblem(item, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return `${describeValue(value)} is not a plain object`;
  for (const [key, item] of Object.entries(value)) {
    if (key === '__proto__') return 'the key "__proto__" is not allowed';
    const problem = jsonProblem(item, depth + 1);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** A JSON value (not `undefined`), copied so the policy never shares objects with its input. */
const jsonValue = (label: string) =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      const problem = value === undefined ? 'a value is required' : jsonProblem(value);
      if (problem !== undefined)
        ctx.addIssue({
          code: 'custom',
          message: `Invalid ${label} ${describeValue(value)}: expected a JSON value (${problem})`,
        });
    })
    .transform((value) => JSON.parse(JSON.stringify(value)) as unknown);

function conditionSchema(spelling: PolicySpelling) {
  const keys = conditionKeys(spelling);
  const tests = keys.slice(1);
  const spelled = (camel: string): string =>
    spelling === 'camelCase' ? camel : (CONDITION_TESTS.find(([c]) => c === camel)?.[1] ?? camel);
  const number = (name: string) => z.number({ error: invalid(name, 'a finite number') }).optional();
  const string = (name: string) => z.string({ error: invalid(name, 'a string') }).optional();
  const path = z
    .string({ error: invalid('path', 'a dot path such as "amount" or "to.email"') })
    .superRefine((value, ctx) => {
      const problem = argPathProblem(value);
      if (problem === undefined) return;
      ctx.addIssue({
        code: 'custom',
        message: `Invalid path ${JSON.stringify(value)}: ${problem} (expected a dot path such as "amount", "to.email" or "items.0.sku")`,
      });
    });
  return z
    .strictObject(
      {
        path,
        equals: jsonValue('equals').optional(),
        in: z.array(jsonValue('in item'), { error: invalid('in', 'a list of JSON values') }).optional(),
        gt: number('gt'),
        gte: number('gte'),
        lt: number('lt'),
        lte: number('lte'),
        [spelled('startsWith')]: string(spelled('startsWith')),
        [spelled('endsWith')]: string(spelled('endsWith')),
        includes: string('includes'),
        exists: z.boolean({ error: invalid('exists', 'true or false') }).optional(),
      },
      strict('condition', keys),
    )
    .refine((c) => tests.some((t) => (c as Record<string, unknown>)[t] !== undefined), {
      message: `a condition needs at least one test (one of ${tests.join(', ')})`,
      // also when another key is bad, so every problem is listed at once
      when: (payload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value),
    })
    .transform((c) => {
      // the camelCase ArgCondition, without absent tests
      const read = c as Record<string, unknown>;
      const out: Record<string, unknown> = { path: read.path };
      for (const [camel, snake] of CONDITION_TESTS) {
        const value = read[spelling === 'camelCase' ? camel : snake];
        if (value !== undefined) out[camel] = value;
      }
      return out;
    });
}

function buildPolicySchema(spelling: PolicySpelling): z.ZodType<ApprovalPolicy> {
  const decision = (label: string) => z.enum(DECISIONS, { error: invalid(label, '"allow", "ask" or "deny"') });
  const rule = z.strictObject(
    {
      name: z
        .string({ error: invalid('name', 'a rule name (1 to 100 characters)') })
        .min(1, { error: 'Invalid name "": expected a rule name (1 to 100 characters)' })
        .max(100, { error: 'Invalid name: expected a rule name of at most 100 characters' })
        .optional(),
      tool: z
        .string({ error: invalid('tool', 'a tool name or "*"') })
        .min(1, { error: 'Invalid tool "": expected a tool name or "*"' }),
      when: z.array(conditionSchema(spelling), { error: invalid('when', 'a list of conditions') }).optional(),
      decision: decision('decision'),
      reason: z.string({ error: invalid('reason', 'a string') }).optional(),
    },
    strict('rule', RULE_KEYS),
  );
  return z
    .strictObject(
      {
        rules: z.array(rule, { error: invalid('rules', 'a list of rules') }).optional(),
        default: decision('default').optional(),
      },
      strict('approval policy', POLICY_KEYS),
    )
    .transform((policy) => {
      const frozen = deepFreeze(dropUndefined(policy)) as ApprovalPolicy;
      checkedPolicies.add(frozen);
      return frozen;
    });
}

/** `value` without `undefined` properties (zod keeps an optional key given as `undefined`), deeply. */
function dropUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropUndefined);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = dropUndefined(item);
  return out;
}

/** The schema of an `ApprovalPolicy` written in code (camelCase keys): core's `approvalPolicySchema`. */
export const camelCaseApprovalPolicySchema: z.ZodType<ApprovalPolicy> = buildPolicySchema('camelCase');

/**
 * The same schema for crew.yaml's snake_case spelling (`starts_with`, `ends_with`); its output
 * uses the camelCase keys of `ApprovalPolicy`.
 * @internal
 */
export const snakeCaseApprovalPolicySchema: z.ZodType<ApprovalPolicy> = buildPolicySchema('snake_case');

/** `path` as `rules[1].when[0].path`: `.key` for keys, `[i]` for list indexes. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/**
 * The keys allowed in the object at `path` of a policy (the policy, a rule, or a condition), for
 * unknown-key messages of a config that embeds a policy (crew.yaml `approvals:`).
 * @internal
 */
export function approvalPolicyKeys(path: readonly PropertyKey[], spelling: PolicySpelling): readonly string[] {
  if (path.length === 0) return POLICY_KEYS;
  return path.length === 2 ? RULE_KEYS : conditionKeys(spelling);
}

/**
 * Every problem of `value` as an approval policy in `spelling`, as `ConfigProblem`s (an unknown
 * key is one problem per key, at the key's path); or the parsed, deep-frozen policy.
 * @internal
 */
export function approvalPolicyProblems(
  value: unknown,
  spelling: PolicySpelling = 'camelCase',
): { policy: ApprovalPolicy; problems?: undefined } | { policy?: undefined; problems: ConfigProblem[] } {
  const schema = spelling === 'camelCase' ? camelCaseApprovalPolicySchema : snakeCaseApprovalPolicySchema;
  let result: z.ZodSafeParseResult<ApprovalPolicy>;
  try {
    result = schema.safeParse(value);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { problems: [{ path: '', message: `reading the approval policy threw: ${why}` }] };
  }
  if (result.success) return { policy: result.data };
  const problems: ConfigProblem[] = [];
  for (const issue of result.error.issues) {
    if (issue.code !== 'unrecognized_keys') {
      problems.push({ path: formatPath(issue.path), message: issue.message });
      continue;
    }
    const allowed = approvalPolicyKeys(issue.path, spelling).join(', ');
    for (const key of issue.keys)
      problems.push({
        path: formatPath([...issue.path, key]),
        message: `unknown key ${JSON.stringify(key)} (expected ${allowed})`,
      });
  }
  return { problems };
}
