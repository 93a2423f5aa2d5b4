import { describeValue, outcomeToJson, type Outcome, type PendingApproval } from '@signalyard/core';
import type { Command } from 'commander';
import { RunnerError } from 'signalyard';
import { terminalJson, terminalText } from './cli-io.js';
import type { CommandContext } from './command-context.js';
import { CliSessionError } from './errors/cli-session-error.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { sessionKeyArgument } from './offline-timeline.js';
import { openConfiguredRunner } from './runner-config.js';

/** The options of `signalyard approve`. */
interface ApproveOptions {
  readonly config: string;
  readonly allow?: boolean;
  readonly deny?: boolean;
  readonly by?: string;
  readonly reason?: string;
  readonly json?: boolean;
}

/** decisions-wave3 §13: a decision's `reason` and `by` are capped (UTF-16 code units). */
const MAX_REASON = 1000;
const MAX_BY = 200;

/** `signalyard approve <sessionKey> <approvalId> --allow|--deny --config <module>`. */
export function addApproveCommand(program: Command, ctx: CommandContext): void {
  program
    .command('approve')
    .description("decide a tool call held for approval, with the app's runner (--config)")
    .argument('<sessionKey>', 'the session holding the call, e.g. agent:desk:telegram:dm:1003')
    .argument('<approvalId>', 'the pending approval, e.g. ap-1 (see signalyard sessions show)')
    .requiredOption(
      '--config <module>',
      "the app's runner configuration: a module whose default export is RunnerOptions or a function returning them (.ts through tsx)",
    )
    .option('--allow', 'approve: the held tool call runs, in this process, once')
    .option('--deny', 'deny: the model is told the call was denied')
    .option('--by <who>', 'who decides (routes may check it; the audit log and the version record it)')
    .option('--reason <text>', "why (a denied call's tool message carries it to the model)")
    .option('--json', 'print { sessionKey, approvalId, approved, by, reason, outcome } as JSON')
    .addHelpText(
      'after',
      `
Builds the app's runner from --config (its store must be the app's: a SQLite file or a
PostgreSQL database) and calls runner.approve(sessionKey, [{ id, approved, reason }], { by }).
The decision goes through the session's routes like every signal; with --allow the held tool call
runs in this process, with the config's tools, once (it is committed before it runs). Prints the
outcome: 0 when the decision was applied, 1 when the session is unknown, nothing with that id is
pending, or a route refused or the turn failed; 2 for usage errors and configs that cannot load.

Examples:
  signalyard approve agent:desk:telegram:dm:1003 ap-1 --allow --by rita@finance --config runner.config.ts
  signalyard approve agent:desk:telegram:dm:1003 ap-1 --deny --reason "over the limit" --config dist/runner.config.js --json`,
    )
    .action(async (key: string, approvalId: string, options: ApproveOptions) => {
      await approveCommand(ctx, key, approvalId, options);
    });
}

/** Checks the command line before anything loads: exactly one of --allow / --deny, and §13's caps. */
function decisionOf(approvalId: string, options: ApproveOptions): boolean {
  if (options.allow === true && options.deny === true) {
    throw new CliUsageError({ message: 'pass one of --allow or --deny, not both' });
  }
  if (options.allow !== true && options.deny !== true) {
    throw new CliUsageError({
      message: `missing decision: pass --allow or --deny for approval ${JSON.stringify(approvalId)}`,
    });
  }
  if (approvalId === '')
    throw new CliUsageError({ message: 'approval id "": expected a pending approval id such as ap-1' });
  if (options.by !== undefined && (options.by === '' || options.by.length > MAX_BY)) {
    throw new CliUsageError({
      message: `--by ${describeValue(options.by)}: expected 1 to ${MAX_BY} characters (who decides)`,
    });
  }
  if (options.reason !== undefined && options.reason.length > MAX_REASON) {
    throw new CliUsageError({
      message: `--reason of ${options.reason.length} characters: expected at most ${MAX_REASON}`,
    });
  }
  return options.allow === true;
}

/**
 * Decides one pending approval with the runner the config builds. The session must exist and
 * hold `approvalId` pending (else `CliSessionError`, exit 1, nothing runs); the outcome is printed,
 * and a `rejected`, `failed` or `stopped` one exits 1.
 */
async function approveCommand(
  ctx: CommandContext,
  keyText: string,
  approvalId: string,
  options: ApproveOptions,
): Promise<void> {
  const { key } = sessionKeyArgument(keyText, 'session key');
  const approved = decisionOf(approvalId, options);
  const configured = await openConfiguredRunner(options.config, ctx.cwd, { requireStore: 'signalyard approve' });
  try {
    const { runner } = configured;
    const view = await runner.session(key);
    if (view === undefined) {
      throw new RunnerError({
        code: 'SESSION_NOT_FOUND',
        message: `no session ${JSON.stringify(key)} in the store of config ${describeValue(options.config)} (see 'signalyard sessions list')`,
      });
    }
    const pending = view.pendingApprovals;
    const call = pending.find((p) => p.id === approvalId);
    if (call === undefined) {
      const listed = pending.length === 0 ? 'none is pending' : `pending: ${pending.map((p) => p.id).join(', ')}`;
      throw new CliSessionError({
        code: 'CLI_APPROVAL_NOT_PENDING',
        sessionKey: key,
        message: `session ${JSON.stringify(key)} has no pending approval ${JSON.stringify(approvalId)} (${listed}); nothing ran`,
      });
    }
    const decision = { id: approvalId, approved, ...(options.reason !== undefined && { reason: options.reason }) };
    const outcome = await runner.approve(key, [decision], options.by === undefined ? {} : { by: options.by });
    print(ctx, { key, call, approved, options, outcome });
    if (outcome.status === 'rejected' || outcome.status === 'failed' || outcome.status === 'stopped') {
      throw new CliSessionError({
        code: 'CLI_APPROVAL_REFUSED',
        sessionKey: key,
        message: `session ${JSON.stringify(key)} did not apply the decision on ${JSON.stringify(approvalId)}: ${statusLine(outcome)}`,
      });
    }
  } finally {
    await configured.close();
  }
}

function print(
  ctx: CommandContext,
  at: { key: string; call: PendingApproval; approved: boolean; options: ApproveOptions; outcome: Outcome },
): void {
  const { key, call, approved, options, outcome } = at;
  if (options.json === true) {
    const json = {
      sessionKey: key,
      approvalId: call.id,
      approved,
      ...(options.by !== undefined && { by: options.by }),
      ...(options.reason !== undefined && { reason: options.reason }),
      outcome: outcomeToJson(outcome),
    };
    ctx.stdout.write(`${terminalJson(json)}\n`);
    return;
  }
  const { out } = ctx;
  const who = options.by === undefined ? '' : ` by ${terminalText(options.by)}`;
  const verb = approved ? out.green('allowed') : out.red('denied');
  ctx.stdout.write(
    `${terminalText(call.id)} ${verb}${who}: ${terminalText(call.toolName)} ${terminalJson(call.arguments ?? null)} (${terminalText(key)})\n`,
  );
  ctx.stdout.write(`outcome: ${statusLine(outcome)}\n`);
  const reply = replyOf(outcome.output);
  if (reply !== undefined) ctx.stdout.write(`reply: ${terminalJson(reply)}\n`);
  for (const p of outcome.pendingApprovals ?? []) {
    ctx.stdout.write(
      `pending: ${terminalText(p.id)} ${terminalText(p.toolName)} ${terminalJson(p.arguments ?? null)}\n`,
    );
  }
}

/** `completed`, `rejected (not a reviewer)`, `failed: CODE: message`. */
function statusLine(outcome: Outcome): string {
  const action = outcome.action as { type?: string; reason?: unknown } | undefined;
  if (outcome.error !== undefined) {
    return `${outcome.status}: ${outcome.error.code}: ${terminalText(outcome.error.message)}`;
  }
  if (outcome.status === 'rejected' && typeof action?.reason === 'string') {
    return `rejected (${terminalText(action.reason)})`;
  }
  return outcome.status;
}

/** The reply a person reads: a crew's `visibleContent`, an engine's `text` or `content`, or a string output. */
function replyOf(output: unknown): string | undefined {
  if (typeof output === 'string') return output;
  if (typeof output !== 'object' || output === null) return undefined;
  const o = output as { visibleContent?: unknown; text?: unknown; content?: unknown };
  for (const v of [o.visibleContent, o.text, o.content]) if (typeof v === 'string' && v !== '') return v;
  return undefined;
}
