import type { TranscriptEntry } from '@signalyard/core';
import { aliasesOf, publicTranscript } from './approval-aliases.js';
import { defaultTranscript } from './default-transcript.js';
import type { AgentRuntime } from './runner-options.js';
import { newStrategy, type SessionPersistence } from './session-persistence.js';
import type { SessionQueue } from './session-queue.js';
import { viewOf, type SessionView } from './session-view.js';

/**
 * `runner.session()`: the stored checkpoint with the session's live queue state; a session never
 * saved but live in the queue is shown at version 0 with its (new or loaded) strategy.
 * @internal
 */
export async function readSessionView(
  key: string,
  queue: SessionQueue,
  persistence: SessionPersistence,
): Promise<SessionView | undefined> {
  const live = queue.live(key);
  const stored = await persistence.read(key);
  const liveness = { busy: live?.busy ?? false, queued: live?.queued ?? 0 };
  if (stored === undefined) {
    if (live === undefined) return undefined;
    const { state } = live;
    const strategy = state.kind === 'loaded' ? state.strategy : newStrategy(live.agent);
    return {
      sessionKey: key,
      agentId: live.agent.id,
      version: 0,
      strategy: strategy.snapshot(),
      history: [],
      engineState: undefined,
      pendingApprovals: [],
      ...liveness,
    };
  }
  return viewOf(key, stored.version, stored.data, liveness);
}

/**
 * `runner.transcript()`: the stored session as its engine's own `transcript` tells it (approval
 * ids shown as the public aliases), else the default transcript of its user and assistant messages.
 * @internal
 */
export async function readTranscript(
  key: string,
  persistence: SessionPersistence,
  agents: ReadonlyMap<string, AgentRuntime>,
): Promise<TranscriptEntry[]> {
  const stored = await persistence.read(key);
  if (stored === undefined) return [];
  const { data } = stored;
  const agent = agents.get(data.agentId);
  const own = agent?.definition.engine;
  if (typeof own === 'object' && typeof own.transcript === 'function')
    return publicTranscript(own.transcript(data.history, data.engine), aliasesOf(data));
  return defaultTranscript(data.history, data.agentId);
}
