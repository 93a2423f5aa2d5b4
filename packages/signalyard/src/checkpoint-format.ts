import { describeValue, type ChatMessage, type SessionCheckpointV1, type StrategySnapshot } from '@signalyard/core';
import { RunnerError } from './errors/runner-error.js';

/**
 * Reads a stored checkpoint. An unknown `v` (or a malformed document) is an error, never a guess.
 * @throws RunnerError `CHECKPOINT_FORMAT_UNSUPPORTED`.
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
  return {
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
