import type { Inbox } from '@signalyard/core';
import type { ControlDeps } from './inbox-control.js';
import type { InboxProducer } from './inbox-producer.js';
import type { AgentRuntime } from './runner-options.js';
import type { WorkerSetting } from './runner-options-schema.js';
import type { SessionPersistence } from './session-persistence.js';
import type { SessionQueue } from './session-queue.js';

/** What an {@link InboxWorker} works with. @internal */
export interface WorkerDeps {
  readonly inbox: Inbox;
  readonly queue: SessionQueue;
  readonly persistence: SessionPersistence;
  readonly agents: ReadonlyMap<string, AgentRuntime>;
  readonly producer: InboxProducer;
  readonly settings: Exclude<WorkerSetting, false>;
  readonly maxSessions: number;
  readonly maxHistoryMessages: number;
  readonly outcomeTtlMs: number;
  readonly maxOutcomeBytes: number;
  readonly warn: (message: string) => void;
  /** What control entries (rewind, delete) are applied with. */
  readonly control: ControlDeps;
}
