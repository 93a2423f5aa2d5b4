import type { Checkpoint } from '../checkpoint-store.js';
import type { ChatMessage } from '../model.js';
import type { PendingApproval } from '../approval.js';
import type { SessionCause, SessionCheckpointV1, SessionVersion } from '../session-checkpoint.js';
import type { StrategySnapshot } from '../execution-strategy.js';
import { describeValue } from '../signal.js';
import { inboxFieldsProblem } from './inbox-seq.js';

/** What {@link readSessionCheckpoint} found: the checkpoint, or why it cannot be read. */
export type SessionCheckpointRead =
  | { readonly ok: true; readonly data: SessionCheckpointV1 }
  | {
      readonly ok: false;
      /** What is wrong, naming the value. */
      readonly problem: string;
      /** True when the document is well-formed but a history entry is not a chat message. */
      readonly badEntry: boolean;
    };

/**
 * Reads stored session checkpoint data (format v1), as every reader must: an unknown `v` or a
 * malformed document is a problem, never a guess; unknown top-level fields (a newer release's)
 * are kept. The one place that knows the format's rules; each caller wraps a problem in its own
 * error.
 */
export function readSessionCheckpoint(data: unknown): SessionCheckpointRead {
  const bad = (problem: string, badEntry = false): SessionCheckpointRead => ({ ok: false, problem, badEntry });
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return bad(`expected an object { v, agentId, strategy, history, engine }, got ${describeValue(data)}`);
  }
  const d = data as Record<string, unknown>;
  if (d.v !== 1) return bad(`unknown checkpoint format version v=${describeValue(d.v)}; this release reads v=1`);
  if (typeof d.agentId !== 'string' || d.agentId === '')
    return bad(`agentId ${describeValue(d.agentId)} is not an agent id`);
  const strategy = d.strategy;
  if (typeof strategy !== 'object' || strategy === null || typeof (strategy as { type?: unknown }).type !== 'string') {
    return bad(`strategy ${describeValue(strategy)} is not a strategy snapshot`);
  }
  if (!Array.isArray(d.history)) return bad(`history ${describeValue(d.history)} is not a list of messages`);
  const history = d.history as unknown[];
  const entry = history.findIndex((m) => !isStoredMessage(m));
  if (entry >= 0) {
    return bad(
      `history[${entry}] is ${describeValue(history[entry])}, expected a chat message { role: "system" | "user" | "assistant" | "tool", content: string }`,
      true,
    );
  }
  const inboxProblem = inboxFieldsProblem(d);
  if (inboxProblem !== undefined) return bad(inboxProblem);
  return {
    ok: true,
    data: {
      ...d,
      v: 1,
      agentId: d.agentId,
      strategy: strategy as StrategySnapshot,
      history: history as ChatMessage[],
      engine: d.engine,
    },
  };
}

function isStoredMessage(m: unknown): boolean {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
  const { role, content } = m as { role?: unknown; content?: unknown };
  return (
    (role === 'system' || role === 'user' || role === 'assistant' || role === 'tool') && typeof content === 'string'
  );
}

/** How many approvals are pending in a session checkpoint (0 when the field is absent). */
export function pendingApprovalCount(data: SessionCheckpointV1): number {
  return Array.isArray(data.pendingApprovals) ? data.pendingApprovals.length : 0;
}

/**
 * `data` as the first version of a fork or the new version of a rewind, with `cause`: its pending
 * approvals are never re-opened. They move to `staleApprovals` with `reason` (`stale: forked` /
 * `stale: rewound`), so the engine's next turn answers them as denied; stale approvals not yet
 * delivered stay. The one rule the Runner and the CLI both apply.
 */
export function retireApprovals(
  data: SessionCheckpointV1,
  cause: SessionCause,
  reason: 'stale: rewound' | 'stale: forked',
): SessionCheckpointV1 {
  const { pendingApprovals: pending, staleApprovals: stale, ...rest } = data;
  const retired = Array.isArray(pending)
    ? (pending as readonly PendingApproval[]).map((p) => ({ id: p.id, reason }))
    : [];
  const kept: readonly { readonly id: string; readonly reason: string }[] = Array.isArray(stale) ? stale : [];
  const staleApprovals = [...kept, ...retired];
  return staleApprovals.length === 0 ? { ...rest, cause } : { ...rest, staleApprovals, cause };
}

/** A kept checkpoint and its decoded data as a `SessionVersion` (what `Runner.history` yields). */
export function sessionVersionOf(checkpoint: Checkpoint, data: SessionCheckpointV1): SessionVersion {
  return {
    version: checkpoint.version,
    updatedAt: checkpoint.updatedAt,
    agentId: data.agentId,
    ...(data.cause !== undefined && { cause: data.cause }),
    strategy: data.strategy,
    historyLength: data.history.length,
    pendingApprovals: pendingApprovalCount(data),
  };
}
