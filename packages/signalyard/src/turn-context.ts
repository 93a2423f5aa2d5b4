import type {
  ApprovalDecision,
  ChatMessage,
  Clock,
  ExecutionStrategy,
  PendingApproval,
  Signal,
  TextSource,
} from '@signalyard/core';
import { describeValue } from '@signalyard/core';
import { enginePending, engineDecisions, type ApprovalAliases } from './approval-aliases.js';
import type { TurnContext } from './engine.js';
import { RunnerError } from './errors/runner-error.js';
import { receiptIdOf, type Job } from './live-session.js';
import type { TurnInput } from './turn-input.js';
import type { TurnSink } from './turn-stream.js';
import { INTERRUPT_SIGNAL } from './turn-interrupt.js';

const noText = (): void => undefined;

/** `ctx.idempotencyKey(name)` for the job's signal: `<receiptId>:<name>`, the receipt id made on first use. */
function idempotencyKeyOf(job: Job, name: unknown): string {
  if (typeof name !== 'string' || name === '')
    throw new RunnerError({
      code: 'RUNNER_INPUT_INVALID',
      message: `ctx.idempotencyKey needs a name (a non-empty string, e.g. 'charge'), got ${describeValue(name)}`,
    });
  job.receiptId ??= globalThis.crypto.randomUUID();
  return `${job.receiptId}:${name}`;
}

/** What a turn's context reads off its turn (`Turn` in turn.ts): the input, and where commits, events and text go. @internal */
export interface TurnSource {
  readonly t: TurnInput;
  readonly deps: { readonly persistence: { readonly clock: Clock } };
  /** The decisions the turn resumed with, and the approvals pending before it (engine ids through `aliases`). */
  readonly approvals: readonly ApprovalDecision[];
  readonly pendingBefore: readonly PendingApproval[];
  readonly aliases: ApprovalAliases;
  commit(state: unknown): Promise<void>;
  emit(event: unknown): void;
  emitText(sink: TurnSink, delta: unknown, source: TextSource | undefined): void;
}

/**
 * The TurnContext of one turn, read off its {@link TurnSource}. `emit`, `commit` and `emitText` are
 * made on first read, `abortSignal` and `signals` too: most engines never touch them. (Three
 * closures made per turn, as own properties, halved the Runner's signals per second in
 * `pnpm bench signalyard`, 364k/s → 150k/s, so they stay accessors; a wrapping engine that spreads
 * the context passes them on by name — see `TurnContext`.)
 * @internal
 */
export class TurnContextImpl implements TurnContext {
  readonly sessionKey: string;
  readonly agentId: string;
  readonly signal: Signal;
  readonly history: readonly ChatMessage[];
  readonly state: unknown;
  readonly strategy: ExecutionStrategy;
  readonly streaming: boolean;
  readonly clock: Clock;
  readonly approvals: readonly ApprovalDecision[];
  readonly pendingApprovals: readonly PendingApproval[];
  readonly #turn: TurnSource;
  #emit: TurnContext['emit'] | undefined;
  #emitText: TurnContext['emitText'] | undefined;
  #commit: TurnContext['commit'] | undefined;
  #idempotencyKey: TurnContext['idempotencyKey'] | undefined;
  #signals: readonly Signal[] | undefined;

  constructor(turn: TurnSource) {
    const { t } = turn;
    this.sessionKey = t.session.key;
    this.agentId = t.session.agent.id;
    this.signal = t.job.signal;
    this.history = t.history;
    this.state = t.loaded.engineState;
    this.strategy = t.loaded.strategy;
    this.streaming = t.job.sink !== undefined;
    this.clock = turn.deps.persistence.clock;
    this.approvals = engineDecisions(turn.approvals, turn.aliases);
    this.pendingApprovals = enginePending(turn.pendingBefore, turn.aliases);
    this.#turn = turn;
    this.#signals = t.signals;
  }

  get emit(): TurnContext['emit'] {
    return (this.#emit ??= (event) => {
      this.#turn.emit(event);
    });
  }

  get emitText(): TurnContext['emitText'] {
    const { sink } = this.#turn.t.job;
    if (sink === undefined) return noText;
    return (this.#emitText ??= (delta, source) => {
      this.#turn.emitText(sink, delta, source);
    });
  }

  get commit(): TurnContext['commit'] {
    return (this.#commit ??= (state) => this.#turn.commit(state));
  }

  get idempotencyKey(): TurnContext['idempotencyKey'] {
    return (this.#idempotencyKey ??= (name) => idempotencyKeyOf(this.#turn.t.job, name));
  }

  get abortSignal(): AbortSignal {
    return this.#turn.t.job.stop.signal;
  }

  /**
   * The id of the signal's receipt, stable across every redelivery of its inbox entry (without a
   * durable inbox: a fresh UUID per signal, made on first read): what `ctx.idempotencyKey(name)`
   * builds `<receiptId>:<name>` on.
   */
  get receiptId(): string {
    return receiptIdOf(this.#turn.t.job);
  }

  /** The turn's interrupt signal (internal: {@link interruptSignalOf}). */
  get [INTERRUPT_SIGNAL](): AbortSignal | undefined {
    return this.#turn.t.interruptSignal;
  }

  /** Made on first read for a single signal's turn (most engines never look). */
  get signals(): readonly Signal[] {
    return (this.#signals ??= Object.freeze([this.signal]));
  }
}
