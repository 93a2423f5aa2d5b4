import { count, type CommandContext } from './command-context.js';
import { listSessions, sessionAt, sessionHistory } from './offline-timeline.js';
import type { HistoryStore } from './open-store.js';
import { pendingApprovalCount } from '@signalyard/core/internal';
import { terminalJson, terminalText } from './cli-io.js';
import { causeText, messageLine, oneLine, renderTable, routeText } from './session-format.js';

/** `sessions list`: a table (key, agent, version, updated), or JSON lines. */
export async function listCommand(
  ctx: CommandContext,
  store: HistoryStore,
  flags: { prefix?: string; after?: string; limit?: number; json?: boolean },
): Promise<void> {
  const rows: string[][] = [];
  for await (const s of listSessions(store, flags)) {
    if (flags.json === true) ctx.stdout.write(`${terminalJson(s)}\n`);
    else
      rows.push([
        terminalText(s.sessionKey),
        terminalText(s.agentId ?? '-'),
        String(s.version),
        terminalText(s.updatedAt),
      ]);
  }
  if (flags.json === true) return;
  if (rows.length === 0) {
    const where = [
      flags.prefix === undefined ? '' : ` with prefix ${terminalJson(flags.prefix)}`,
      flags.after === undefined ? '' : ` after ${terminalJson(flags.after)}`,
    ].join('');
    ctx.stdout.write(`no sessions${where}\n`);
    return;
  }
  ctx.stdout.write(renderTable(['SESSION', 'AGENT', 'VERSION', 'UPDATED'], rows, ctx.out, new Set([2])));
}

/** `sessions history`: the version timeline as a table, newest first, or JSON lines (`SessionVersion`s). */
export async function historyCommand(
  ctx: CommandContext,
  store: HistoryStore,
  key: string,
  flags: { before?: number; limit?: number; json?: boolean },
): Promise<void> {
  const versions = await sessionHistory(store, key, {
    ...(flags.before !== undefined && { before: flags.before }),
    ...(flags.limit !== undefined && { limit: flags.limit }),
  });
  if (flags.json === true) {
    for (const v of versions) ctx.stdout.write(`${terminalJson(v)}\n`);
    return;
  }
  if (versions.length === 0) {
    ctx.stdout.write(
      `no versions of ${terminalText(key)}${flags.before === undefined ? '' : ` before ${flags.before}`}\n`,
    );
    return;
  }
  const rows = versions.map((v) => [
    String(v.version),
    terminalText(v.updatedAt),
    causeText(v.cause),
    routeText(v.cause),
    terminalText(v.cause?.status ?? '-'),
  ]);
  ctx.stdout.write(renderTable(['VERSION', 'TIME', 'CAUSE', 'ROUTE', 'STATUS'], rows, ctx.out, new Set([0])));
}

/** `sessions show`: one version of a session (default: the current one), as lines or JSON. */
export async function showCommand(
  ctx: CommandContext,
  store: HistoryStore,
  key: string,
  flags: { version?: number; tail?: number; json?: boolean },
): Promise<void> {
  const current = await store.load(key);
  const { checkpoint, data } = await sessionAt(store, key, flags.version);
  const tail = flags.tail ?? 10;
  const messages = tail === 0 ? [] : data.history.slice(-tail);
  const pending = pendingApprovalCount(data);
  if (flags.json === true) {
    const out = {
      sessionKey: key,
      version: checkpoint.version,
      currentVersion: current?.version ?? checkpoint.version,
      updatedAt: checkpoint.updatedAt,
      agentId: data.agentId,
      ...(data.cause !== undefined && { cause: data.cause }),
      strategy: data.strategy,
      pendingApprovals: pending,
      historyLength: data.history.length,
      historyTail: messages,
    };
    ctx.stdout.write(`${terminalJson(out, 2)}\n`);
    return;
  }
  const { bold, dim } = ctx.out;
  const isCurrent = current === undefined || current.version === checkpoint.version;
  const version = `${checkpoint.version}${isCurrent ? ' (current)' : ` (current: ${current.version})`}`;
  const cause =
    data.cause === undefined
      ? '-'
      : [causeText(data.cause), routeText(data.cause), terminalText(data.cause.status ?? '-')]
          .filter((s) => s !== '-')
          .join(' · ') || '-';
  const shown = messages.length === data.history.length ? '' : `, the last ${messages.length}`;
  const lines = [
    `${dim('session:')} ${terminalText(key)}`,
    `${dim('agent:')} ${bold(terminalText(data.agentId))}`,
    `${dim('version:')} ${version}, saved ${terminalText(checkpoint.updatedAt)}`,
    `${dim('cause:')} ${cause}`,
    `${dim('strategy:')} ${oneLine(JSON.stringify(data.strategy), 300)}`,
    `${dim('pending approvals:')} ${pending}`,
    `${dim('history:')} ${count(data.history.length, 'message')}${shown}${messages.length > 0 ? ':' : ''}`,
    ...messages.map((m) => `  ${messageLine(m)}`),
  ];
  ctx.stdout.write(`${lines.join('\n')}\n`);
}
