import type { Clock } from './clock.js';
import type { SignalRoute } from './route.js';
import type { RunnerEvent } from './runner-event.js';
import type { Signal } from './signal.js';

/**
 * Handles a `custom(name)` action for one signal. Its return value becomes the outcome's
 * `output`; a throw becomes a `failed` outcome.
 */
export type CustomActionHandler = (ctx: {
  sessionKey: string;
  agentId: string;
  signal: Signal;
  abortSignal: AbortSignal;
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- documents that a handler may be async
}) => Promise<unknown> | unknown;

/** What a plugin receives at runner start. */
export interface PluginContext {
  /** Subscribes to every runner event, delivered synchronously in order. Returns an unsubscribe function. */
  on(listener: (event: RunnerEvent) => void): () => void;
  /** Claims the custom action `name`. Two plugins claiming one name is a config error at start. */
  handleCustomAction(name: string, handler: CustomActionHandler): void;
  /** The runner's logger, when it was given one. */
  readonly logger?: {
    /** Detail for debugging. */
    debug(...args: unknown[]): void;
    /** Something worth a look that did not fail anything. */
    warn(...args: unknown[]): void;
  };
  /**
   * The runner's clock (`createRunner({ clock })`), when the host has one: a plugin that stamps
   * times (the audit log) reads them here, so one clock stamps everything a runner records.
   */
  readonly clock?: Clock;
}

/**
 * The one extension interface shared by every Signalyard package. A plugin contributes signal
 * routes (the router's plugin tier: defaults an agent can override) and may observe and extend
 * the runner through events and custom actions. Third-party plugins depend on
 * `@signalyard/core` only.
 *
 * @example
 * ```ts
 * const quietHours: Plugin = {
 *   name: 'quiet-hours',
 *   signalRoutes: () => [{
 *     kind: SignalKind.UserMessage,
 *     name: 'quiet-hours',
 *     predicate: () => new Date().getHours() < 7,
 *     action: Action.reject('quiet_hours'),
 *   }],
 * };
 * ```
 */
export interface Plugin {
  /** Unique within a runner. */
  readonly name: string;
  /** The plugin's routes; read once when a runner is created. Default: none. */
  signalRoutes?(): readonly SignalRoute[];
  /** Called once at runner start, in plugin order. */
  setup?(ctx: PluginContext): void | Promise<void>;
  /** Called once at runner close, in reverse plugin order. */
  dispose?(): void | Promise<void>;
}
