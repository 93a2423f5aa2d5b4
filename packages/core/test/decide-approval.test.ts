import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { ConfigError, decideApproval, defineTool, parseApprovalPolicy } from '@signalyard/core';
import type { ApprovalPolicy, ApprovalRule, ArgCondition, Tool, ToolCall, ToolContext } from '@signalyard/core';
import { rejectsCode } from '@signalyard/test-utils';

const ctx: ToolContext = { toolCallId: 'c1', agentId: 'support' };
const callOf = (name: string, args: unknown = {}): ToolCall => ({ id: 'c1', name, arguments: args });
const toolOf = (name: string, needsApproval?: Tool['needsApproval']): Tool => ({
  name,
  parameters: { type: 'object' },
  execute: async () => 'done',
  ...(needsApproval === undefined ? {} : { needsApproval }),
});

/** Whether the single condition `condition` holds for `args` (a one-rule policy that asks when it does). */
async function holds(condition: ArgCondition, args: unknown): Promise<boolean> {
  const policy: ApprovalPolicy = { rules: [{ tool: 't', when: [condition], decision: 'deny' }] };
  return (await decideApproval(policy, callOf('t', args), undefined, ctx)).decision === 'deny';
}

describe('decideApproval: rules', () => {
  it('allows everything with no policy and no needsApproval', async () => {
    await expect(decideApproval(undefined, callOf('refund'), toolOf('refund'), ctx)).resolves.toEqual({
      decision: 'allow',
    });
    await expect(decideApproval({}, callOf('refund'), undefined, ctx)).resolves.toEqual({ decision: 'allow' });
  });

  it('uses the policy default when no rule matches', async () => {
    for (const d of ['allow', 'ask', 'deny'] as const) {
      await expect(
        decideApproval({ default: d, rules: [{ tool: 'other', decision: 'allow' }] }, callOf('refund'), undefined, ctx),
      ).resolves.toEqual({
        decision: d,
      });
    }
  });

  it('the first matching rule decides, with its index and reason', async () => {
    const policy = parseApprovalPolicy({
      rules: [
        { tool: 'lookup', decision: 'allow' },
        { tool: 'refund', when: [{ path: 'amount', gt: 100 }], decision: 'ask', reason: 'large refund' },
        { tool: 'refund', decision: 'allow' },
        { tool: '*', decision: 'deny', reason: 'not allowed' },
      ],
    });
    await expect(decideApproval(policy, callOf('refund', { amount: 250 }), undefined, ctx)).resolves.toEqual({
      decision: 'ask',
      reason: 'large refund',
      rule: 1,
    });
    await expect(decideApproval(policy, callOf('refund', { amount: 50 }), undefined, ctx)).resolves.toEqual({
      decision: 'allow',
      rule: 2,
    });
    await expect(decideApproval(policy, callOf('delete'), undefined, ctx)).resolves.toEqual({
      decision: 'deny',
      reason: 'not allowed',
      rule: 3,
    });
  });

  it('`*` matches every tool; any other name matches only itself, exactly', async () => {
    const policy: ApprovalPolicy = {
      rules: [
        { tool: 'Refund', decision: 'deny' },
        { tool: '*', decision: 'ask' },
      ],
    };
    await expect(decideApproval(policy, callOf('refund'), undefined, ctx)).resolves.toEqual({
      decision: 'ask',
      rule: 1,
    });
    await expect(decideApproval(policy, callOf('Refund'), undefined, ctx)).resolves.toEqual({
      decision: 'deny',
      rule: 0,
    });
    await expect(decideApproval(policy, callOf('*'), undefined, ctx)).resolves.toEqual({ decision: 'ask', rule: 1 });
  });

  it('a rule with an empty when always matches its tool; all conditions must hold', async () => {
    const policy: ApprovalPolicy = {
      rules: [
        {
          tool: 't',
          when: [
            { path: 'a', equals: 1 },
            { path: 'b', equals: 2 },
          ],
          decision: 'deny',
        },
        { tool: 't', when: [], decision: 'ask' },
      ],
    };
    await expect(decideApproval(policy, callOf('t', { a: 1, b: 2 }), undefined, ctx)).resolves.toMatchObject({
      rule: 0,
    });
    await expect(decideApproval(policy, callOf('t', { a: 1, b: 3 }), undefined, ctx)).resolves.toMatchObject({
      rule: 1,
    });
  });
});

describe('decideApproval: needsApproval', () => {
  it('asks when no rule matches and needsApproval is true, even with default deny', async () => {
    await expect(decideApproval({ default: 'deny' }, callOf('pay'), toolOf('pay', true), ctx)).resolves.toEqual({
      decision: 'ask',
    });
    await expect(decideApproval(undefined, callOf('pay'), toolOf('pay', false), ctx)).resolves.toEqual({
      decision: 'allow',
    });
  });

  it('a matching rule wins over needsApproval, which is then not called', async () => {
    const needs = vi.fn(() => true);
    const policy: ApprovalPolicy = { rules: [{ tool: 'pay', decision: 'allow' }] };
    await expect(decideApproval(policy, callOf('pay'), toolOf('pay', needs), ctx)).resolves.toEqual({
      decision: 'allow',
      rule: 0,
    });
    expect(needs).not.toHaveBeenCalled();
  });

  it('calls a needsApproval function with the arguments and the context, sync or async', async () => {
    const needs = vi.fn((args: unknown) => (args as { amount: number }).amount > 10);
    const args = { amount: 20 };
    await expect(decideApproval(undefined, callOf('pay', args), toolOf('pay', needs), ctx)).resolves.toEqual({
      decision: 'ask',
    });
    expect(needs).toHaveBeenCalledWith(args, ctx);
    await expect(
      decideApproval({ default: 'deny' }, callOf('pay', { amount: 1 }), toolOf('pay', needs), ctx),
    ).resolves.toEqual({
      decision: 'deny',
    });
    await expect(
      decideApproval(
        undefined,
        callOf('pay'),
        toolOf('pay', async () => true),
        ctx,
      ),
    ).resolves.toEqual({ decision: 'ask' });
  });

  it('asks only for exactly true: a truthy non-boolean does not ask', async () => {
    const needs = (() => 'yes') as unknown as () => boolean;
    await expect(decideApproval(undefined, callOf('pay'), toolOf('pay', needs), ctx)).resolves.toEqual({
      decision: 'allow',
    });
  });

  it('rejects with the error a needsApproval function throws', async () => {
    const boom = new Error('lookup failed');
    const needs = (): boolean => {
      throw boom;
    };
    await expect(decideApproval(undefined, callOf('pay'), toolOf('pay', needs), ctx)).rejects.toBe(boom);
  });

  it('a defineTool tool’s needsApproval receives parsed arguments; invalid ones need no approval', async () => {
    const needs = vi.fn(({ cents }: { cents: number }) => cents > 1000);
    const pay = defineTool({
      name: 'pay',
      input: z.object({ amount: z.number() }).transform(({ amount }) => ({ cents: amount * 100 })),
      execute: async () => 'paid',
      needsApproval: needs,
    });
    await expect(decideApproval(undefined, callOf('pay', { amount: 20 }), pay, ctx)).resolves.toEqual({
      decision: 'ask',
    });
    expect(needs).toHaveBeenCalledWith({ cents: 2000 }, ctx);
    await expect(decideApproval(undefined, callOf('pay', { amount: 'lots' }), pay, ctx)).resolves.toEqual({
      decision: 'allow',
    });
    expect(needs).toHaveBeenCalledTimes(1);
    const flagged = defineTool({ name: 'pay', input: z.object({}), execute: async () => 'paid', needsApproval: true });
    await expect(decideApproval(undefined, callOf('pay'), flagged, ctx)).resolves.toEqual({ decision: 'ask' });
  });
});

describe('decideApproval: approvalHint', () => {
  const hinted = (hint: 'allow' | 'ask', needsApproval?: boolean): Tool => ({
    ...toolOf('crm_refund', needsApproval),
    approvalHint: hint,
  });

  it("asks for an 'ask' hint when no rule matches, whatever the default", async () => {
    for (const policy of [undefined, {}, { default: 'allow' as const }, { default: 'deny' as const }]) {
      await expect(decideApproval(policy, callOf('crm_refund'), hinted('ask'), ctx)).resolves.toEqual({
        decision: 'ask',
      });
    }
  });

  it("allows an 'allow' hint over a policy default of ask or deny", async () => {
    await expect(decideApproval({ default: 'ask' }, callOf('crm_refund'), hinted('allow'), ctx)).resolves.toEqual({
      decision: 'allow',
    });
    await expect(decideApproval({ default: 'deny' }, callOf('crm_refund'), hinted('allow'), ctx)).resolves.toEqual({
      decision: 'allow',
    });
  });

  it('an explicit rule always wins over the hint, and needsApproval: true still asks', async () => {
    const allowRule: ApprovalPolicy = { rules: [{ tool: 'crm_refund', decision: 'allow' }] };
    await expect(decideApproval(allowRule, callOf('crm_refund'), hinted('ask'), ctx)).resolves.toEqual({
      decision: 'allow',
      rule: 0,
    });
    const denyAll: ApprovalPolicy = { rules: [{ tool: '*', decision: 'deny', reason: 'frozen' }] };
    await expect(decideApproval(denyAll, callOf('crm_refund'), hinted('allow'), ctx)).resolves.toEqual({
      decision: 'deny',
      reason: 'frozen',
      rule: 0,
    });
    await expect(decideApproval(undefined, callOf('crm_refund'), hinted('allow', true), ctx)).resolves.toEqual({
      decision: 'ask',
    });
  });

  it('rejects a hint that is neither allow nor ask, naming it', async () => {
    const bad = { ...toolOf('crm_refund'), approvalHint: 'maybe' } as unknown as Tool;
    const error = await rejectsCode(
      decideApproval(undefined, callOf('crm_refund'), bad, ctx),
      'APPROVAL_ARGUMENT_INVALID',
    );
    expect(error.message).toContain('invalid approvalHint "maybe"');
  });
});

describe('decideApproval: conditions', () => {
  const args = {
    amount: 150,
    currency: 'EUR',
    to: { email: 'ann@corp.example' },
    items: [{ sku: 'A-1' }, { sku: 'B-2' }],
    meta: { tags: ['x', 'y'], nested: { ok: true } },
    nothing: null,
    '7': 'digit key',
  };

  it.each<[string, ArgCondition, boolean]>([
    ['equals a number', { path: 'amount', equals: 150 }, true],
    ['equals another number', { path: 'amount', equals: 151 }, false],
    ['equals an object, key order ignored', { path: 'meta', equals: { nested: { ok: true }, tags: ['x', 'y'] } }, true],
    ['equals an array in another order', { path: 'meta.tags', equals: ['y', 'x'] }, false],
    ['equals null on null', { path: 'nothing', equals: null }, true],
    ['equals a string, not a number', { path: 'amount', equals: '150' }, false],
    ['in a list', { path: 'currency', in: ['USD', 'EUR'] }, true],
    ['in a list of objects', { path: 'items.0', in: [{ sku: 'A-1' }] }, true],
    ['not in a list', { path: 'currency', in: ['USD'] }, false],
    ['in an empty list', { path: 'currency', in: [] }, false],
    ['gt below', { path: 'amount', gt: 149 }, true],
    ['gt at the bound', { path: 'amount', gt: 150 }, false],
    ['gte at the bound', { path: 'amount', gte: 150 }, true],
    ['lt at the bound', { path: 'amount', lt: 150 }, false],
    ['lte at the bound', { path: 'amount', lte: 150 }, true],
    ['a range', { path: 'amount', gt: 100, lte: 200 }, true],
    ['gt on a string', { path: 'currency', gt: 0 }, false],
    ['gt on a numeric string', { path: 'items.0.sku', gt: 0 }, false],
    ['startsWith', { path: 'to.email', startsWith: 'ann@' }, true],
    ['endsWith', { path: 'to.email', endsWith: '@corp.example' }, true],
    ['endsWith another domain', { path: 'to.email', endsWith: '@evil.example' }, false],
    ['includes', { path: 'to.email', includes: '@corp' }, true],
    ['a string test on a number', { path: 'amount', startsWith: '1' }, false],
    ['an array index', { path: 'items.1.sku', equals: 'B-2' }, true],
    ['an index past the end', { path: 'items.2.sku', exists: true }, false],
    ['a name on an array', { path: 'items.length', exists: true }, false],
    ['a digit key on an object', { path: '7', equals: 'digit key' }, true],
    ['a path through a string', { path: 'currency.length', exists: true }, false],
    ['a path through null', { path: 'nothing.x', exists: true }, false],
    ['an inherited property', { path: 'to.constructor', exists: true }, false],
    ['a prototype key', { path: '__proto__', exists: true }, false],
    ['exists on a present path', { path: 'to.email', exists: true }, true],
    ['exists: false on a present path', { path: 'to.email', exists: false }, false],
    ['exists on a missing path', { path: 'to.phone', exists: true }, false],
    ['exists: false on a missing path', { path: 'to.phone', exists: false }, true],
    ['equals on a missing path', { path: 'to.phone', equals: null }, false],
    ['exists: false and another test on a missing path', { path: 'to.phone', exists: false, equals: 1 }, false],
    ['exists: false and another test on a present path', { path: 'amount', exists: false, equals: 150 }, false],
    ['exists and equals on a present path', { path: 'amount', exists: true, equals: 150 }, true],
  ])('%s', async (_title, condition, expected) => {
    await expect(holds(condition, args)).resolves.toBe(expected);
  });

  it('treats arguments that are not an object as having no paths', async () => {
    for (const value of [undefined, null, 'text', 3, []]) {
      await expect(holds({ path: 'a', exists: false }, value)).resolves.toBe(true);
      await expect(holds({ path: 'a', exists: true }, value)).resolves.toBe(false);
    }
  });

  it('reads a property whose getter throws as missing', async () => {
    const hostile = {
      get amount(): number {
        throw new Error('no');
      },
    };
    await expect(holds({ path: 'amount', exists: false }, hostile)).resolves.toBe(true);
  });
});

describe('decideApproval: bad input', () => {
  it('rejects an invalid policy with a ConfigError listing every problem', async () => {
    const error = await rejectsCode(
      decideApproval({ rules: [{ tool: '', decision: 'later' as 'ask' }] }, callOf('x'), undefined, ctx),
      'CONFIG_INVALID',
    );
    if (!ConfigError.isInstance(error)) return expect.unreachable('expected a ConfigError');
    expect(error.problems.map((p) => p.path)).toEqual(['rules[0].tool', 'rules[0].decision']);
    await rejectsCode(
      decideApproval('ask' as unknown as ApprovalPolicy, callOf('x'), undefined, ctx),
      'CONFIG_INVALID',
    );
    await rejectsCode(decideApproval(null as unknown as ApprovalPolicy, callOf('x'), undefined, ctx), 'CONFIG_INVALID');
  });

  it.each<[string, unknown, unknown, unknown, string]>([
    ['a call that is not an object', 'refund', undefined, ctx, 'invalid call'],
    ['a call without an id', { name: 'refund', arguments: {} }, undefined, ctx, 'call id'],
    ['a call without a name', { id: 'c1', arguments: {} }, undefined, ctx, 'call name'],
    ['a tool that is not an object', callOf('refund'), 'refund', ctx, 'invalid tool'],
    ['a tool for another call', callOf('refund'), toolOf('lookup'), ctx, '"lookup"'],
    [
      'a needsApproval that is neither a boolean nor a function',
      callOf('refund'),
      { ...toolOf('refund'), needsApproval: 'yes' },
      ctx,
      'needsApproval',
    ],
    ['a context that is not an object', callOf('refund'), undefined, undefined, 'invalid context'],
  ])('rejects %s with APPROVAL_ARGUMENT_INVALID', async (_title, call, tool, context, words) => {
    const error = await rejectsCode(
      decideApproval(undefined, call as ToolCall, tool as Tool | undefined, context as ToolContext),
      'APPROVAL_ARGUMENT_INVALID',
    );
    expect(error.message).toContain(words);
  });
});

// --- properties: rule order and precedence -------------------------------------------------

const TOOLS = ['refund', 'lookup', 'delete'] as const;
const decisionArb = fc.constantFrom('allow', 'ask', 'deny' as const);
const conditionArb: fc.Arbitrary<ArgCondition> = fc.oneof(
  fc.integer({ min: -5, max: 5 }).map((n) => ({ path: 'amount', gt: n })),
  fc.integer({ min: -5, max: 5 }).map((n) => ({ path: 'amount', lte: n })),
  fc.boolean().map((b) => ({ path: 'amount', exists: b })),
  fc.constantFrom('@corp', '@evil').map((s) => ({ path: 'to.email', includes: s })),
  fc.constantFrom('EUR', 'USD', 'GBP').map((c) => ({ path: 'currency', in: [c, 'CHF'] })),
);
const ruleArb: fc.Arbitrary<ApprovalRule> = fc.record(
  {
    tool: fc.constantFrom(...TOOLS, '*', 'other'),
    when: fc.array(conditionArb, { maxLength: 3 }),
    decision: decisionArb,
    reason: fc.string({ minLength: 1, maxLength: 5 }),
  },
  { requiredKeys: ['tool', 'decision'] },
);
const policyArb: fc.Arbitrary<ApprovalPolicy> = fc.record(
  { rules: fc.array(ruleArb, { maxLength: 6 }), default: decisionArb },
  { requiredKeys: [] },
);
const argsArb = fc.record(
  {
    amount: fc.integer({ min: -6, max: 6 }),
    to: fc.record({ email: fc.constantFrom('a@corp.example', 'b@evil.example') }),
    currency: fc.constantFrom('EUR', 'USD', 'GBP'),
  },
  { requiredKeys: [] },
);
const callArb = fc.record({ id: fc.constant('c1'), name: fc.constantFrom(...TOOLS), arguments: argsArb });
const needsArb = fc.option(fc.boolean(), { nil: undefined });

/** Whether `rule` alone matches `call` (a one-rule policy decides by it). */
async function matches(rule: ApprovalRule, call: ToolCall): Promise<boolean> {
  return (await decideApproval({ rules: [rule] }, call, undefined, ctx)).rule === 0;
}

describe('decideApproval: properties', () => {
  it('the deciding rule is the first that matches on its own; no match falls to needsApproval, then the default', async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, callArb, needsArb, async (policy, call, needs) => {
        const verdict = await decideApproval(policy, call, toolOf(call.name, needs), ctx);
        const rules = policy.rules ?? [];
        const alone = await Promise.all(rules.map(async (rule) => matches(rule, call)));
        const first = alone.indexOf(true);
        if (first === -1) {
          expect(verdict).toEqual({ decision: needs === true ? 'ask' : (policy.default ?? 'allow') });
        } else {
          const rule = rules[first]!;
          expect(verdict).toEqual({
            decision: rule.decision,
            rule: first,
            ...(rule.reason === undefined ? {} : { reason: rule.reason }),
          });
        }
      }),
    );
  });

  it('rules after the deciding one never change the verdict; non-matching rules before it only shift its index', async () => {
    await fc.assert(
      fc.asyncProperty(policyArb, fc.array(ruleArb, { maxLength: 3 }), callArb, async (policy, extra, call) => {
        const rules = policy.rules ?? [];
        const verdict = await decideApproval(policy, call, undefined, ctx);
        if (verdict.rule === undefined) return;
        const appended = await decideApproval({ ...policy, rules: [...rules, ...extra] }, call, undefined, ctx);
        expect(appended).toEqual(verdict);
        const misses: ApprovalRule[] = extra.map((r) => ({ ...r, tool: 'other' }));
        const prepended = await decideApproval({ ...policy, rules: [...misses, ...rules] }, call, undefined, ctx);
        expect(prepended).toEqual({ ...verdict, rule: verdict.rule + misses.length });
      }),
    );
  });

  it('`*` matches whenever the exact name does, and a rule for another tool never matches', async () => {
    await fc.assert(
      fc.asyncProperty(ruleArb, callArb, async (rule, call) => {
        const exact = await matches({ ...rule, tool: call.name }, call);
        const star = await matches({ ...rule, tool: '*' }, call);
        expect(star).toBe(exact);
        expect(await matches({ ...rule, tool: `${call.name}-other` }, call)).toBe(false);
      }),
    );
  });

  it('equals holds for a structurally equal value in any key order; exists tells present from missing', async () => {
    await fc.assert(
      // (a "__proto__" key is refused by policy validation, tested above)
      fc.asyncProperty(
        fc.jsonValue().filter((v) => !JSON.stringify(v).includes('"__proto__"')),
        fc.boolean(),
        async (value, present) => {
          const reversed = (v: unknown): unknown =>
            Array.isArray(v)
              ? v.map(reversed)
              : typeof v === 'object' && v !== null
                ? Object.fromEntries(
                    Object.entries(v)
                      .reverse()
                      .map(([k, x]) => [k, reversed(x)]),
                  )
                : v;
          const args = present ? { deep: { value: reversed(value) } } : { deep: {} };
          const json = JSON.parse(JSON.stringify(value)) as ArgCondition['equals'];
          await expect(holds({ path: 'deep.value', equals: json }, args)).resolves.toBe(present);
          await expect(holds({ path: 'deep.value', exists: true }, args)).resolves.toBe(present);
          await expect(holds({ path: 'deep.value', exists: false }, args)).resolves.toBe(!present);
        },
      ),
    );
  });
});
