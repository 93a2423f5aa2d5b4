import { describeValue, type ChatMessage, type SessionCheckpointV1, type StrategySnapshot } from '@signalyard/core';
import { RunnerError } from './errors/runner-error.js';

/**
 * Reads a stored checkpoint. An unknown `v` (or a malformed document) is an error, never a guess.
 * @throws RunnerError `CHECKPOINT_FORMAT_UNSUPPORTED`; `CHECKPOINT_LOAD_FAILED` for a history
 * entry that is not a chat message.
 */
export function decodeCheckpoint(key: string, data: unknown): SessionCheckpointV1 {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw unsupported(key, `expected an object { v, agentId, strategy, history, engine }, got ${describeValue(data)}`);
  }
  const d = data as Record<string, unknown>;
  if (d.v !== 1)
    throw unsupported(key, `unknown checkpoint format version v=${describeValue(d.v)}; this runner reads v=1`);
  if (typeof d.agentId !== 'string' || d.agentId === '')
    throw unsupported(key, `agentId ${describeValue(d.agentId)} is not an agent id`);
  const strategy = d.strategy;
  if (typeof strategy !== 'object' || strategy === null || typeof (strategy as { type?: unknown }).type !== 'string') {
    throw unsupported(key, `strategy ${describeValue(strategy)} is not a strategy snapshot`);
  }
  if (!Array.isArray(d.history))
    throw unsupported(key, `history ${describeValue(d.history)} is not a list of messages`);
  const bad = (d.history as unknown[]).findIndex((m) => !isStoredMessage(m));
  if (bad >= 0) {
    throw new RunnerError({
      code: 'CHECKPOINT_LOAD_FAILED',
      message: `Cannot read the checkpoint of session ${JSON.stringify(key)}: history[${bad}] is ${describeValue((d.history as unknown[])[bad])}, expected a chat message { role: "system" | "user" | "assistant" | "tool", content: string }`,
    });
  }
  // Unknown top-level fields (a newer release's) are kept, so a save never drops them.
  return {
    ...d,
    v: 1,
    agentId: d.agentId,
    strategy: strategy as StrategySnapshot,
    history: d.history as ChatMessage[],
    engine: d.engine,
  };
}

function unsupported(key: string, problem: string): RunnerError {
  return new RunnerError({
    code: 'CHECKPOINT_FORMAT_UNSUPPORTED',
    message: `Cannot read the checkpoint of session ${JSON.stringify(key)}: ${problem}`,
  });
}

function isStoredMessage(m: unknown): boolean {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
  const { role, content } = m as { role?: unknown; content?: unknown };
  return (
    (role === 'system' || role === 'user' || role === 'assistant' || role === 'tool') && typeof content === 'string'
  );
}

/** The fields a Runner writes itself on every save; every other top-level field is carried over. */
const OWN_FIELDS = new Set(['v', 'agentId', 'strategy', 'history', 'engine', 'cause']);

/** The top-level fields of `data` a Runner does not write itself (kept across saves). @internal */
export function carriedFields(
  data: SessionCheckpointV1,
  none: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  let carried: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(data)) if (!OWN_FIELDS.has(key)) (carried ??= {})[key] = value;
  return carried ?? none;
}
