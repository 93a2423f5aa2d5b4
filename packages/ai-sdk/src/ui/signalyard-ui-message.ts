import type { Action, Tier } from '@signalyard/core';
import type { UIMessage } from 'ai';

/**
 * The data of a `data-handoff` part: one agent handed the conversation to another. By default
 * only who to whom (and the parallel group, for a group's members): no routing marker, so a page
 * that prints data parts as they are shows none — and a handoff made by a transfer tool call (crew
 * `handoff_mode: tool`) is the same part as one made by a marker. `includeSignals: true` adds how
 * (`via`), the marker (`signal`) and, for a tool call, the `tool` and its `reason`, for debugging
 * views.
 */
export interface HandoffData {
  /** The crew agent that handed off. */
  readonly from: string;
  /** The crew agent that took over. */
  readonly to: string;
  /** The parallel group, when the handoff belongs to one. */
  readonly group?: string;
  /**
   * How: a routing signal in the reply, a parallel group's `next_agent`, or the fallback. Only
   * with `includeSignals: true` (streams only; transcripts leave it out).
   */
  readonly via?: 'signal' | 'parallel' | 'fallback';
  /**
   * The signal (marker) that routed, for `via: 'signal'`. Only with `includeSignals: true`
   * (streams only; transcripts leave it out).
   */
  readonly signal?: string;
  /**
   * The transfer tool the model called, e.g. `transfer_to_billing`, when the handoff was a tool
   * call (crew `handoff_mode: tool` or `both`). Only with `includeSignals: true` (streams only).
   */
  readonly tool?: string;
  /** The `reason` the model gave in its transfer call, when it gave one. Only with `includeSignals: true` (streams only). */
  readonly reason?: string;
}

/** The data of a `data-route` part: how the Runner routed the turn (sent unless `sendRouting: false`). */
export interface RouteData {
  /** The tier whose route decided; absent when a runner default applied or nothing routed. */
  readonly tier?: Tier;
  /** The name of the route that decided, when it has one. */
  readonly routeName?: string;
  /** The action applied; absent when the signal was not routed. */
  readonly action?: Action;
}

/** The data of a `data-rejected` part: the turn was refused (outcome `rejected`). */
export interface RejectedData {
  /** The reject action's reason, or the refusal's message. */
  readonly reason: string;
}

/**
 * The data parts Signalyard's UI message streams carry, by name (`data-handoff`, `data-route`,
 * `data-rejected`), for typing the AI SDK client.
 *
 * @example
 * ```ts
 * import { useChat } from '@ai-sdk/react';
 * import type { SignalyardUIMessage } from '@signalyard/ai-sdk';
 *
 * const { messages } = useChat<SignalyardUIMessage>();
 * // part.type === 'data-handoff' → part.data is HandoffData
 * ```
 */
// eslint-disable-next-line @typescript-eslint/consistent-type-definitions -- a type literal: the AI SDK needs it assignable to Record<string, unknown>, which an interface is not
export type SignalyardUIDataTypes = {
  /** `data-handoff`: a crew handoff. */
  handoff: HandoffData;
  /** `data-route`: how the turn was routed. */
  route: RouteData;
  /** `data-rejected`: the turn was refused. */
  rejected: RejectedData;
};

/** An AI SDK `UIMessage` with Signalyard's data parts typed (see {@link SignalyardUIDataTypes}). */
export type SignalyardUIMessage = UIMessage<unknown, SignalyardUIDataTypes>;
