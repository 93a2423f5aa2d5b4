/**
 * What an interrupt asks of the outside world. `clarification` (a question for the user) and
 * `confirmation` (a yes/no approval) are also routing targets; every kind can be raised with
 * `ctx.interrupt(kind, payload)`.
 */
export type InterruptKind =
  'clarification' | 'confirmation' | 'agent_review' | 'checkpoint' | 'resource_exhausted' | 'timeout' | 'system_error';

/** Every {@link InterruptKind}, in declaration order. */
export const INTERRUPT_KINDS: readonly InterruptKind[] = Object.freeze([
  'clarification',
  'confirmation',
  'agent_review',
  'checkpoint',
  'resource_exhausted',
  'timeout',
  'system_error',
]);

const KIND_SET: ReadonlySet<string> = new Set(INTERRUPT_KINDS);

/** True when `value` is an {@link InterruptKind}. */
export function isInterruptKind(value: unknown): value is InterruptKind {
  return typeof value === 'string' && KIND_SET.has(value);
}

/**
 * A pending question a paused run waits on. A run that raised one has `terminated: false` and
 * `envelope.interrupt` set until `resume` answers it.
 */
export interface Interrupt {
  /** Unique id (a UUID). */
  id: string;
  /** What the run asks for. */
  kind: InterruptKind;
  /** The stage that raised it. */
  stage: string;
  /** For a routing target: the raising stage's output. For `ctx.interrupt`: the payload given. */
  payload?: unknown;
  /** When it was raised (ISO 8601). */
  createdAt: string;
  /** When it expires (ISO 8601): `createdAt` plus the pipeline's `interruptTtlMs[kind]`, when set. */
  expiresAt?: string;
}

/**
 * The answer to an interrupt, given to `resume`. A clarification usually answers with `text`; a
 * confirmation with `approved` (anything but `approved: true` denies it).
 */
export interface InterruptResponse {
  /** A written answer (a clarification). */
  text?: string;
  /** A confirmation's answer: `true` continues, anything else ends the run `user_denied`. */
  approved?: boolean;
  /** A named decision, for interrupts that offer choices. */
  decision?: string;
  /** Anything else the answering stage needs. */
  data?: unknown;
}

/** An interrupt that `resume` answered, as kept in `envelope.resolvedInterrupts`. */
export type ResolvedInterrupt = Interrupt & {
  /** The answer given to `resume`. */
  response: InterruptResponse;
  /** When it was answered (ISO 8601). */
  resolvedAt: string;
};
