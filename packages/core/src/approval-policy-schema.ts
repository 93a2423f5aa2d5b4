import type * as z from 'zod';
import type { ApprovalPolicy } from './approval.js';
import { ConfigError } from './errors/config-error.js';
import { approvalPolicyProblems, camelCaseApprovalPolicySchema } from './internal/approval-policy-schemas.js';

/**
 * The zod schema of an {@link ApprovalPolicy} written in code (camelCase keys). Its output is a
 * deep-frozen copy. It reports every problem at once: unknown keys at every level, an empty
 * `tool`, a condition with no test, a bad `path` (empty, or with an empty segment such as
 * `'a..b'`), a `decision`/`default` other than `allow`/`ask`/`deny`, non-finite numbers, and
 * `equals`/`in` values that are not JSON.
 *
 * Most code wants {@link parseApprovalPolicy}, which throws a `ConfigError` listing them.
 *
 * @example
 * ```ts
 * const result = approvalPolicySchema.safeParse({ rules: [{ tool: 'refund', decision: 'ask' }] });
 * if (result.success) result.data.rules?.[0]?.decision;   // 'ask'
 * ```
 */
export const approvalPolicySchema: z.ZodType<ApprovalPolicy> = camelCaseApprovalPolicySchema;

/**
 * Validates an approval policy written in code (camelCase keys) and returns it deep-frozen.
 *
 * @throws ConfigError `CONFIG_INVALID` listing every problem, each with its path
 * (`rules[1].when[0].path`): see {@link approvalPolicySchema}.
 *
 * @example
 * ```ts
 * const policy = parseApprovalPolicy({
 *   rules: [
 *     { tool: 'refund', when: [{ path: 'amount', gt: 100 }], decision: 'ask', reason: 'large refund' },
 *     { tool: 'delete_account', decision: 'deny' },
 *   ],
 *   default: 'allow',
 * });
 * ```
 */
export function parseApprovalPolicy(value: unknown): ApprovalPolicy {
  const { policy, problems } = approvalPolicyProblems(value);
  if (problems !== undefined) throw new ConfigError({ problems });
  return policy;
}
