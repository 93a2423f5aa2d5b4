// A fast-check arbitrary of approval policies, shared by the crew's and the Runner's approval
// property tests.
import fc from 'fast-check';

/** What an approval rule decides (core's `ApprovalDecisionKind`, spelled out to keep this package free of core). */
type DecisionKind = 'allow' | 'ask' | 'deny';

/** An approval policy as core's `ApprovalPolicy` has it: rules on tools, an optional `n > above` condition each, a default. */
export interface PolicyShape {
  readonly rules: readonly {
    readonly tool: string;
    readonly decision: DecisionKind;
    readonly when?: readonly { readonly path: string; readonly gt: number }[];
  }[];
  readonly default: DecisionKind;
}

/**
 * Random approval policies over the tools `t0`–`t2` and `*`: at most `maxRules` rules, each with
 * an optional condition on the call's argument `n` (`n > 0..4`), decisions drawn from `decisions`
 * (repeat one to weight it).
 */
export function approvalPolicyArbitrary(opts: {
  readonly decisions: readonly DecisionKind[];
  readonly maxRules: number;
}): fc.Arbitrary<PolicyShape> {
  const kind = fc.constantFrom(...opts.decisions);
  return fc
    .record({
      rules: fc.array(
        fc.record({
          tool: fc.constantFrom('t0', 't1', 't2', '*'),
          above: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
          decision: kind,
        }),
        { maxLength: opts.maxRules },
      ),
      default: kind,
    })
    .map(({ rules, default: fallback }) => ({
      rules: rules.map((r) => ({
        tool: r.tool,
        decision: r.decision,
        ...(r.above === undefined ? {} : { when: [{ path: 'n', gt: r.above }] }),
      })),
      default: fallback,
    }));
}
