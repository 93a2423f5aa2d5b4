import {
  InboxError,
  describeValue,
  isSignalKind,
  outcomeFromJson,
  signal as makeSignal,
  type Inbox,
  type InboxEntry,
  type InboxReceipt,
  type InboxStreamRef,
  type JsonValue,
  type Outcome,
  type Signal,
  type SignalJson,
} from '@signalyard/core';
import { errorText, serializeCheckpointData } from '@signalyard/core/internal';
import { formatSessionKey } from '@signalyard/sessions';
import { toolApprovalPayloadProblem } from './approvals.js';
import type { RunnerError } from './errors/runner-error.js';
import { CONTROL_KIND } from './inbox-control.js';
import { InboxProducer } from './inbox-producer.js';
import { InboxWorker } from './inbox-worker.js';
import type { Job } from './live-session.js';
import type { InboundMessage } from './runner-api.js';
import { closedError, inputError } from './outcomes.js';
import { OPTIONS, checkedOptions } from './runner-input.js';
import type { ResolvedRunnerOptions } from './runner-options.js';
import type { SessionPersistence } from './session-persistence.js';
import type { SessionTimeline } from './session-timeline.js';
import type { InboxHooks, SessionQueue } from './session-queue.js';
import { relayReceipt, resumeFromLog, streamRef, type RelayDeps } from './inbox-stream.js';
import { sinkControl, turnStream, type TurnSink, type TurnStream, type TurnStreamControl } from './turn-stream.js';

/** What a runner's {@link RunnerInbox} works with. @internal */
export interface RunnerInboxDeps {
  readonly inbox: Inbox;
  readonly options: ResolvedRunnerOptions;
  readonly persistence: SessionPersistence;
}

/**
 * A runner's durable inbox (inbox.md): the producer (`accept`, `outcome`), and — with `worker`
 * on — the worker that settles leased entries through the runner's own session queue.
 * @internal
 */
export class RunnerInbox {
  readonly inbox: Inbox;
  readonly producer: InboxProducer;
  #worker: InboxWorker | undefined;
  readonly #d: RunnerInboxDeps;

  constructor(deps: RunnerInboxDeps) {
    this.#d = deps;
    this.inbox = deps.inbox;
    this.producer = new InboxProducer(deps.inbox, deps.options.clock, deps.options.outcomeTtlMs);
  }

  /**
   * Starts the worker over `queue` (with `worker` on); returns the queue's hooks through a late
   * binding (the queue is made before the worker that needs it).
   */
  startWorker(queue: SessionQueue, timeline: SessionTimeline, settle: (job: Job, outcome: Outcome) => void): void {
    const o = this.#d.options;
    if (o.worker === false) return;
    const worker = new InboxWorker({
      inbox: this.inbox,
      queue,
      persistence: this.#d.persistence,
      agents: o.agents,
      producer: this.producer,
      settings: o.worker,
      maxSessions: o.worker.maxSessions ?? o.maxConcurrentSessions,
      maxHistoryMessages: o.maxHistoryMessages,
      outcomeTtlMs: o.outcomeTtlMs,
      maxOutcomeBytes: o.maxOutcomeBytes,
      warn: (message) => o.logger?.warn(message),
      control: { persistence: this.#d.persistence, timeline },
    });
    this.#hooks = worker.hooks(settle);
    this.#worker = worker;
    worker.start();
  }

  #hooks: InboxHooks | undefined;

  /** The session queue's hooks: they reach the worker once it is started. */
  readonly hooks: InboxHooks = {
    gate: (session, job) => this.#hooks?.gate(session, job) ?? Promise.resolve(true),
    member: (session, job, carried) => this.#hooks?.member(session, job, carried) ?? Promise.resolve('run'),
    applied: (session, job, outcome) => this.#hooks?.applied(session, job, outcome) ?? Promise.resolve(),
  };

  /**
   * `Runner.resumeStream`: its arguments checked when the stream is iterated, then the inbox's
   * log read into a {@link TurnStream}. `inbox`: `undefined` once the runner is closing, `null`
   * without a durable inbox.
   */
  static resumeStream(
    inbox: RunnerInbox | null | undefined,
    ref: unknown,
    opts: { from?: string; abortSignal?: AbortSignal } | undefined,
  ): TurnStream {
    return turnStream(async (sink, control) => {
      if (inbox === undefined) throw closedError();
      const o = checkedOptions(OPTIONS.resumeStream, opts);
      const checked = streamRef(ref, o.from);
      if (inbox === null) throw noInboxError('resumeStream');
      return inbox.resume(checked, o.from, o.abortSignal, sink, control);
    });
  }

  /** Accepts one checked signal (chained per key). */
  accept(
    sessionKey: string,
    agentId: string,
    signal: SignalJson,
    id: string | undefined,
    control?: InboxEntry['control'],
  ): Promise<InboxReceipt> {
    const kind = control ?? (signal.kind === 'tool_approval' ? 'approve' : undefined);
    return this.producer.accept({ sessionKey, agentId, signal, id, ...(kind !== undefined && { control: kind }) });
  }

  /** `dispatch` on a durable inbox: accept, then await the outcome (the caller's abort ends only the wait). */
  async settle(
    sessionKey: string,
    agentId: string,
    signal: SignalJson,
    abortSignal: AbortSignal | undefined,
    sink: TurnSink | undefined,
    control?: InboxEntry['control'],
  ): Promise<Outcome> {
    const receipt = await this.accept(sessionKey, agentId, signal, undefined, control);
    if (sink !== undefined) {
      return relayReceipt(this.#relay, receipt.receiptId, abortSignal, sink, sinkControl(sink));
    }
    return this.producer.outcome(receipt.receiptId, abortSignal === undefined ? {} : { abortSignal });
  }

  /** `Runner.resumeStream`: a receipt's (or a session's in-flight) stream log, into `sink`. */
  resume(
    ref: InboxStreamRef,
    from: string | undefined,
    abortSignal: AbortSignal | undefined,
    sink: TurnSink,
    control: TurnStreamControl,
  ): Promise<Outcome> {
    return resumeFromLog(this.#relay, ref, from, abortSignal, sink, control);
  }

  get #relay(): RelayDeps {
    return { inbox: this.inbox, producer: this.producer, warn: (message) => this.#d.options.logger?.warn(message) };
  }

  /** `dispatch`/`handle`/`approve` on a durable inbox: checked, accepted, awaited (a `tool_approval` as an `approve` entry). */
  async dispatch(
    sessionKey: string,
    agentId: string,
    signal: Signal,
    abortSignal: AbortSignal | undefined,
    sink: TurnSink | undefined,
  ): Promise<Outcome> {
    return this.settle(sessionKey, agentId, signalJsonOf('dispatch', signal), abortSignal, sink);
  }

  /**
   * `rewind`/`deleteSession` on a durable inbox: a control entry, applied by the lease holder in
   * `seq` order; resolves with what it produced (a rewind's view).
   * @throws the control's error (`VERSION_UNAVAILABLE`, `SESSION_NOT_FOUND`, …), rebuilt with its code.
   */
  async control(
    sessionKey: string,
    agentId: string,
    control: 'rewind' | 'delete',
    args: Readonly<Record<string, JsonValue>>,
  ): Promise<unknown> {
    const signal: SignalJson = { kind: CONTROL_KIND, payload: args };
    const outcome = await this.settle(sessionKey, agentId, signal, undefined, undefined, control);
    if (outcome.status === 'failed' && outcome.error !== undefined) throw outcome.error;
    return outcome.output;
  }

  /** The poisoned entries with their outcomes, rebuilt. */
  async *deadLetters(limit: number | undefined): AsyncIterable<{ receipt: InboxReceipt; outcome: Outcome }> {
    for await (const { entry, outcome } of this.inbox.deadLetters(limit === undefined ? {} : { limit })) {
      const receipt: InboxReceipt = {
        receiptId: entry.receiptId,
        sessionKey: entry.sessionKey,
        seq: entry.seq,
        acceptedAt: entry.acceptedAt,
      };
      yield { receipt, outcome: outcomeFromJson(outcome) };
    }
  }

  /** `close()`, first step: pending waits reject with `RUNNER_CLOSED`; no more leases, reads or notices. */
  stopIntake(): void {
    this.producer.close();
    this.#worker?.stop();
  }

  /** `close()` after `closeTimeoutMs`: aborts the turns in flight under leases (they save nothing more). */
  abortAll(reason: unknown): void {
    this.#worker?.abortAll(reason);
  }

  /** `close()`, last step: releases every lease (entries left unsettled stay in the inbox). */
  async releaseAll(): Promise<void> {
    await this.#worker?.releaseAll();
  }
}

/**
 * A signal as the JSON an inbox keeps, checked as `dispatch` checks it, its payload meeting the
 * checkpoint JSON rules.
 * @throws RunnerError `RUNNER_INPUT_INVALID`.
 * @internal
 */
export function signalJsonOf(method: string, signal: Signal): SignalJson {
  if (
    typeof signal !== 'object' ||
    (signal as unknown) === null ||
    !isSignalKind((signal as { kind?: unknown }).kind)
  ) {
    throw inputError(`${method}() needs a Signal { kind, payload }, got ${describeValue(signal)}`);
  }
  if (signal.kind === 'tool_approval') {
    const problem = toolApprovalPayloadProblem(signal.payload);
    if (problem !== undefined) throw inputError(`A tool_approval signal has ${problem}`);
  }
  let text: string;
  try {
    text = serializeCheckpointData(signal.payload === undefined ? null : signal.payload);
  } catch (error) {
    throw inputError(
      `${method}() needs a signal payload meeting the checkpoint JSON rules (no NaN, Infinity, BigInt, functions, symbols or cycles), got ${describeValue(signal.payload)}: ${errorText(error)}`,
      error,
    );
  }
  return { kind: signal.kind, payload: JSON.parse(text) as SignalJson['payload'] };
}

/** `INBOX_CONFIG_INVALID` for an inbox method on a runner without a durable inbox. @internal */
export function noInboxError(method: string): InboxError {
  return new InboxError({
    code: 'INBOX_CONFIG_INVALID',
    message: `${method}() needs a durable inbox: pass inbox (e.g. new MemoryInbox() or a SqliteInbox) to createRunner`,
  });
}

/**
 * An inbound message's session key and agent, resolved as `handle` resolves them, and its
 * `user_message` signal as JSON.
 * @throws RunnerError `RUNNER_INPUT_INVALID`.
 * @internal
 */
export function resolveMessage(
  resolver: ResolvedRunnerOptions['resolver'],
  message: InboundMessage,
): { key: string; agentId: string; signal: SignalJson } {
  if (typeof message !== 'object' || (message as unknown) === null || typeof message.text !== 'string')
    throw inputError(`acceptMessage() needs a message { channel, text, ... }, got ${describeValue(message)}`);
  let resolved;
  try {
    resolved = resolver.resolve(message);
  } catch (error) {
    throw inputError(`Cannot route message ${describeValue(message)}: ${errorText(error)}`, error);
  }
  const signal = signalJsonOf('acceptMessage', makeSignal('user_message', message));
  return { key: formatSessionKey(resolved.sessionKey), agentId: resolved.agentId, signal };
}

/** `RUNNER_INPUT_INVALID` for an agent the runner does not have. @internal */
export function unknownAgent(agentId: string, key: string, agents: ReadonlyMap<string, unknown>): RunnerError {
  return inputError(
    `Unknown agent ${JSON.stringify(agentId)} for session ${JSON.stringify(key)} (agents: ${JSON.stringify([...agents.keys()])})`,
  );
}
