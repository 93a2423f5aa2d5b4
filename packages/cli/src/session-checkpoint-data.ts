import {
  describeValue,
  type ChatMessage,
  type Checkpoint,
  type SessionCheckpointV1,
  type SessionVersion,
  type StrategySnapshot,
} from '@signalyard/core';
import { CliSessionError } from './errors/cli-session-error.js';

/**
 * Reads a stored session checkpoint (`SessionCheckpointV1`), as a Runner does: an unknown `v` or
 * a malformed document is an error, never a guess. Unknown top-level fields (a newer release's)
 * are kept, so a fork or a rewind never drops them.
 *
 * @throws CliSessionError `CLI_CHECKPOINT_UNSUPPORTED` naming the session and the problem.
 */
export function decodeSessionCheckpoint(key: string, data: unknown): SessionCheckpointV1 {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw unsupported(key, `expected an object { v, agentId, strategy, history, engine }, got ${describeValue(data)}`);
  }
  const d = data as Record<string, unknown>;
  if (d.v !== 1)
    throw unsupported(key, `unknown checkpoint format version v=${describeValue(d.v)}; this release reads v=1`);
  if (typeof d.agentId !== 'string' || d.agentId === '') {
    throw unsupported(key, `agentId ${describeValue(d.agentId)} is not an agent id`);
  }
  const strategy = d.strategy;
  if (typeof strategy !== 'object' || strategy === null || typeof (strategy as { type?: unknown }).type !== 'string') {
    throw unsupported(key, `strategy ${describeValue(strategy)} is not a strategy snapshot`);
  }
  if (!Array.isArray(d.history))
    throw unsupported(key, `history ${describeValue(d.history)} is not a list of messages`);
  const bad = (d.history as unknown[]).findIndex((m) => !isStoredMessage(m));
  if (bad >= 0) {
    throw unsupported(
      key,
      `history[${bad}] is ${describeValue((d.history as unknown[])[bad])}, expected a chat message { role: "system" | "user" | "assistant" | "tool", content: string }`,
    );
  }
  return {
    ...d,
    v: 1,
    agentId: d.agentId,
    strategy: strategy as StrategySnapshot,
    history: d.history as ChatMessage[],
    engine: d.engine,
  };
}

/** The agent of a stored checkpoint when it has one, else `undefined` (for listings, which never fail on one bad row). */
export function agentIdOfData(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const agentId = (data as { agentId?: unknown }).agentId;
  return typeof agentId === 'string' && agentId !== '' ? agentId : undefined;
}

/** A kept checkpoint as a `SessionVersion`, the shape `Runner.history` yields. */
export function sessionVersionOf(key: string, checkpoint: Checkpoint): SessionVersion {
  const data = decodeSessionCheckpoint(key, checkpoint.data);
  return {
    version: checkpoint.version,
    updatedAt: checkpoint.updatedAt,
    agentId: data.agentId,
    ...(data.cause !== undefined && { cause: data.cause }),
    strategy: data.strategy,
    historyLength: data.history.length,
    pendingApprovals: pendingCount(data),
  };
}

/** How many approvals are pending in a checkpoint. */
export function pendingCount(data: SessionCheckpointV1): number {
  return Array.isArray(data.pendingApprovals) ? data.pendingApprovals.length : 0;
}

function unsupported(key: string, problem: string): CliSessionError {
  return new CliSessionError({
    code: 'CLI_CHECKPOINT_UNSUPPORTED',
    sessionKey: key,
    message: `cannot read the checkpoint of session ${JSON.stringify(key)}: ${problem}`,
  });
}

function isStoredMessage(m: unknown): boolean {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
  const { role, content } = m as { role?: unknown; content?: unknown };
  return (
    (role === 'system' || role === 'user' || role === 'assistant' || role === 'tool') && typeof content === 'string'
  );
}
