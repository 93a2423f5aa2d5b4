import { describe, expect, expectTypeOf, it } from 'vitest';
import { ConfigError, approvalPolicySchema, parseApprovalPolicy } from '@signalyard/core';
import type { ApprovalPolicy, ConfigProblem } from '@signalyard/core';
import { approvalPolicyProblems, snakeCaseApprovalPolicySchema } from '@signalyard/core/internal';
import { thrown } from '@signalyard/test-utils';

/** The problems `parseApprovalPolicy` reports for `value` (it must throw a ConfigError). */
function problemsOf(value: unknown): readonly ConfigProblem[] {
  const error = thrown(() => parseApprovalPolicy(value));
  if (!ConfigError.isInstance(error)) return expect.unreachable(`expected a ConfigError, got ${String(error)}`);
  expect(error.code).toBe('CONFIG_INVALID');
  return error.problems;
}

const full: ApprovalPolicy = {
  rules: [
    {
      tool: 'refund',
      when: [
        { path: 'amount', gt: 100, lte: 10_000 },
        { path: 'currency', in: ['EUR', 'USD'] },
        { path: 'to.email', endsWith: '@corp.example', startsWith: 'a', includes: '@' },
        { path: 'items.0.sku', exists: true },
        { path: 'meta', equals: { a: [1, null, 'x'], b: false } },
        { path: 'note', equals: null },
        { path: 'fee', gte: 0, lt: 1.5 },
      ],
      decision: 'ask',
      reason: 'large refund',
    },
    { tool: '*', decision: 'allow' },
  ],
  default: 'deny',
};

describe('parseApprovalPolicy: valid policies', () => {
  it('returns every rule, condition and test as given', () => {
    expect(parseApprovalPolicy(full)).toEqual(full);
  });

  it('accepts an empty policy, an empty rule list and an empty when', () => {
    expect(parseApprovalPolicy({})).toEqual({});
    expect(parseApprovalPolicy({ rules: [] })).toEqual({ rules: [] });
    expect(parseApprovalPolicy({ rules: [{ tool: 'x', when: [], decision: 'deny' }] })).toEqual({
      rules: [{ tool: 'x', when: [], decision: 'deny' }],
    });
  });

  it('returns a deep-frozen copy that shares nothing with its input', () => {
    const input = structuredClone(full);
    const policy = parseApprovalPolicy(input);
    expect(Object.isFrozen(policy)).toBe(true);
    expect(Object.isFrozen(policy.rules?.[0]?.when?.[4]?.equals)).toBe(true);
    expect(policy.rules).not.toBe(input.rules);
    (input.rules as unknown as { tool: string }[])[0]!.tool = 'changed';
    (input.rules![0]!.when![4]!.equals as { a: unknown[] }).a.push(2);
    expect(policy).toEqual(full);
    expect(Object.isFrozen(input)).toBe(false);
  });

  it('drops keys given as undefined', () => {
    const policy = parseApprovalPolicy({
      rules: [{ tool: 'x', decision: 'ask', reason: undefined }],
      default: undefined,
    });
    expect(Object.keys(policy)).toEqual(['rules']);
    expect(Object.keys(policy.rules![0]!)).toEqual(['tool', 'decision']);
  });

  it('is what approvalPolicySchema outputs', () => {
    const result = approvalPolicySchema.safeParse(full);
    expect(result.success).toBe(true);
    expect(result.data).toEqual(full);
    expectTypeOf<ReturnType<(typeof approvalPolicySchema)['parse']>>().toEqualTypeOf<ApprovalPolicy>();
  });
});

describe('parseApprovalPolicy: every problem at once', () => {
  it('lists unknown keys at every level, an empty tool, a condition with no test and bad paths', () => {
    const problems = problemsOf({
      rule: [],
      rules: [
        { tool: '', decision: 'ask', why: 'x' },
        {
          tool: 'refund',
          decision: 'ask',
          when: [{ path: 'amount' }, { path: 'a..b', gt: 1 }, { path: 'x', starts_with: 'a' }],
        },
      ],
    });
    expect(problems.map((p) => p.path)).toEqual(
      expect.arrayContaining([
        'rule',
        'rules[0].tool',
        'rules[0].why',
        'rules[1].when[0]',
        'rules[1].when[1].path',
        'rules[1].when[2].starts_with',
      ]),
    );
    expect(problems.find((p) => p.path === 'rule')?.message).toBe('unknown key "rule" (expected rules, default)');
    expect(problems.find((p) => p.path === 'rules[0].why')?.message).toContain(
      'expected name, tool, when, decision, reason',
    );
    expect(problems.find((p) => p.path === 'rules[1].when[2].starts_with')?.message).toContain('startsWith');
    expect(problems.find((p) => p.path === 'rules[1].when[0]')?.message).toContain('at least one test');
    expect(problems.find((p) => p.path === 'rules[0].tool')?.message).toContain('expected a tool name or "*"');
    expect(problems.find((p) => p.path === 'rules[1].when[1].path')?.message).toContain('"a..b"');
  });

  it.each<[string, unknown, string, string]>([
    ['a policy that is not an object', 'allow', '', 'expected an object'],
    ['a list as the policy', [], '', 'expected an object'],
    ['null as the policy', null, '', 'expected an object'],
    ['rules that are not a list', { rules: {} }, 'rules', 'a list of rules'],
    ['a rule that is not an object', { rules: ['x'] }, 'rules[0]', 'expected an object'],
    ['a missing tool', { rules: [{ decision: 'ask' }] }, 'rules[0].tool', 'a tool name'],
    ['a tool that is not a string', { rules: [{ tool: 3, decision: 'ask' }] }, 'rules[0].tool', 'Invalid tool 3'],
    ['a missing decision', { rules: [{ tool: 'x' }] }, 'rules[0].decision', '"allow", "ask" or "deny"'],
    [
      'an unknown decision',
      { rules: [{ tool: 'x', decision: 'maybe' }] },
      'rules[0].decision',
      'Invalid decision "maybe"',
    ],
    ['an unknown default', { default: 'yes' }, 'default', 'Invalid default "yes"'],
    [
      'a reason that is not a string',
      { rules: [{ tool: 'x', decision: 'ask', reason: 1 }] },
      'rules[0].reason',
      'a string',
    ],
    [
      'when that is not a list',
      { rules: [{ tool: 'x', decision: 'ask', when: { path: 'a' } }] },
      'rules[0].when',
      'a list of conditions',
    ],
    [
      'a condition that is not an object',
      { rules: [{ tool: 'x', decision: 'ask', when: ['a'] }] },
      'rules[0].when[0]',
      'expected an object',
    ],
    [
      'an empty path',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: '', exists: true }] }] },
      'rules[0].when[0].path',
      'empty',
    ],
    [
      'a path with a leading dot',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: '.a', exists: true }] }] },
      'rules[0].when[0].path',
      'empty',
    ],
    [
      'a path with a trailing dot',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a.', exists: true }] }] },
      'rules[0].when[0].path',
      'empty',
    ],
    [
      'a path that is not a string',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 1, exists: true }] }] },
      'rules[0].when[0].path',
      'dot path',
    ],
    [
      'gt that is not a number',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', gt: '5' }] }] },
      'rules[0].when[0].gt',
      'a finite number',
    ],
    [
      'lte that is infinite',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', lte: Infinity }] }] },
      'rules[0].when[0].lte',
      'a finite number',
    ],
    [
      'startsWith that is not a string',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', startsWith: 1 }] }] },
      'rules[0].when[0].startsWith',
      'a string',
    ],
    [
      'exists that is not a boolean',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', exists: 'yes' }] }] },
      'rules[0].when[0].exists',
      'true or false',
    ],
    [
      'in that is not a list',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', in: 'EUR' }] }] },
      'rules[0].when[0].in',
      'a list of JSON values',
    ],
    [
      'equals that is not JSON',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', equals: () => 1 }] }] },
      'rules[0].when[0].equals',
      'JSON value',
    ],
    [
      'equals holding NaN',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', equals: [Number.NaN] }] }] },
      'rules[0].when[0].equals',
      'NaN',
    ],
    [
      'equals holding a Date',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', equals: new Date(0) }] }] },
      'rules[0].when[0].equals',
      'plain object',
    ],
    [
      'an in item that is not JSON',
      { rules: [{ tool: 'x', decision: 'ask', when: [{ path: 'a', in: [1n] }] }] },
      'rules[0].when[0].in[0]',
      'JSON value',
    ],
    [
      'equals with a __proto__ key',
      {
        rules: [
          {
            tool: 'x',
            decision: 'ask',
            when: [{ path: 'a', equals: JSON.parse('{"__proto__": {"admin": true}}') as unknown }],
          },
        ],
      },
      'rules[0].when[0].equals',
      '__proto__',
    ],
  ])('reports %s', (_title, value, path, words) => {
    const problems = problemsOf(value);
    const problem = problems.find((p) => p.path === path);
    expect(problem, JSON.stringify(problems)).toBeDefined();
    expect(problem?.message).toContain(words);
  });

  it('names the file’s keys in the message of the error', () => {
    const error = thrown(() =>
      parseApprovalPolicy({ rules: [{ tool: '', decision: 'ask' }], default: 'nope' }),
    ) as ConfigError;
    expect(error.problems).toHaveLength(2);
    expect(error.message).toContain('rules[0].tool');
    expect(error.message).toContain('default');
  });

  it('reports a policy whose reading throws instead of throwing itself', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('no reading');
        },
        ownKeys() {
          throw new Error('no keys');
        },
      },
    );
    const problems = problemsOf(hostile);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toContain('threw');
  });
});

describe('the snake_case spelling (crew.yaml)', () => {
  it('accepts starts_with / ends_with and outputs camelCase', () => {
    const result = snakeCaseApprovalPolicySchema.safeParse({
      rules: [{ tool: 'send', when: [{ path: 'to', starts_with: 'a', ends_with: '.org' }], decision: 'ask' }],
    });
    expect(result.data).toEqual({
      rules: [{ tool: 'send', when: [{ path: 'to', startsWith: 'a', endsWith: '.org' }], decision: 'ask' }],
    });
  });

  it('reports camelCase test names as unknown keys, with the snake_case names expected', () => {
    const { problems } = approvalPolicyProblems(
      { rules: [{ tool: 'send', when: [{ path: 'to', startsWith: 'a' }], decision: 'ask' }] },
      'snake_case',
    );
    expect(problems?.find((p) => p.path === 'rules[0].when[0].startsWith')?.message).toContain('starts_with');
  });
});
