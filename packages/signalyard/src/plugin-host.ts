import {
  AbortedError,
  ConfigError,
  SignalyardError,
  describeValue,
  type Clock,
  type CustomActionHandler,
  type Plugin,
  type PluginContext,
  type RunnerEvent,
  type Signal,
} from '@signalyard/core';
import { errorText, type EventChannel } from '@signalyard/core/internal';
import { RunnerError } from './errors/runner-error.js';
import type { RunnerOptions } from './runner-options.js';
import { raceStop, type Stopper } from './stopper.js';

/** What a custom action handler is called for. @internal */
export interface CustomActionCall {
  readonly sessionKey: string;
  readonly agentId: string;
  readonly signal: Signal;
  /** The action's name. */
  readonly name: string;
  /** Stops the handler: force_stop, the caller's abortSignal, a close() timeout. */
  readonly stop: Stopper;
}

/**
 * Hosts the runner's plugins: runs their `setup` in order (collecting custom action handlers,
 * refusing two plugins claiming one name), their `dispose` in reverse, and custom actions.
 * @internal
 */
export class PluginHost {
  readonly #plugins: readonly Plugin[];
  readonly #hub: EventChannel<RunnerEvent>;
  readonly #logger: RunnerOptions['logger'];
  readonly #clock: Clock;
  readonly #customActions = new Map<string, CustomActionHandler>();

  constructor(
    plugins: readonly Plugin[],
    hub: EventChannel<RunnerEvent>,
    logger: RunnerOptions['logger'],
    clock: Clock,
  ) {
    this.#plugins = plugins;
    this.#hub = hub;
    this.#logger = logger;
    this.#clock = clock;
  }

  /**
   * Runs every plugin's `setup`, in order. When one throws (or two claim one custom action),
   * the plugins already set up are disposed, in reverse, and the error is rethrown.
   */
  async setup(on: PluginContext['on']): Promise<void> {
    const claims = new Map<string, string[]>();
    const done: Plugin[] = [];
    try {
      for (const plugin of this.#plugins) {
        await plugin.setup?.(this.#context(plugin, on, claims));
        done.push(plugin);
      }
      const clashes = [...claims].filter(([, owners]) => owners.length > 1);
      if (clashes.length > 0) {
        throw new ConfigError({
          problems: clashes.map(([name, owners]) => ({
            path: `plugins.customActions.${name}`,
            message: `custom action ${JSON.stringify(name)} is claimed by several plugins: ${owners.map((o) => JSON.stringify(o)).join(', ')}`,
          })),
        });
      }
    } catch (error) {
      for (const plugin of done.reverse()) await this.#dispose(plugin);
      this.#customActions.clear();
      throw error;
    }
  }

  #context(plugin: Plugin, on: PluginContext['on'], claims: Map<string, string[]>): PluginContext {
    return {
      on,
      handleCustomAction: (name, handler) => {
        if (typeof name !== 'string' || name === '' || typeof handler !== 'function') {
          throw new RunnerError({
            code: 'RUNNER_INPUT_INVALID',
            message: `Plugin "${plugin.name}" registered custom action ${describeValue(name)} with ${describeValue(handler)}: expected a non-empty name and a handler function`,
          });
        }
        claims.set(name, [...(claims.get(name) ?? []), plugin.name]);
        if (!this.#customActions.has(name)) this.#customActions.set(name, handler);
      },
      ...(this.#logger === undefined ? {} : { logger: this.#logger }),
      clock: this.#clock,
    };
  }

  /** Disposes every plugin, in reverse order; a `dispose` that throws is reported as a warning. */
  async disposeAll(): Promise<void> {
    for (const plugin of [...this.#plugins].reverse()) await this.#dispose(plugin);
  }

  async #dispose(plugin: Plugin): Promise<void> {
    try {
      await plugin.dispose?.();
    } catch (error) {
      this.#hub.emit({
        type: 'warning',
        message: `Plugin "${plugin.name}" dispose() threw: ${errorText(error)}`,
        cause: error,
      });
    }
  }

  /**
   * Runs the handler of custom action `call.name`, stopped by `call.stop`.
   * @throws RunnerError `CUSTOM_ACTION_UNHANDLED` (no handler), `CUSTOM_ACTION_FAILED` (it threw
   * something that is not a `SignalyardError`); an `AbortedError` when stopped.
   */
  async runCustom(call: CustomActionCall): Promise<unknown> {
    const handler = this.#customActions.get(call.name);
    if (handler === undefined) {
      throw new RunnerError({
        code: 'CUSTOM_ACTION_UNHANDLED',
        message: `No plugin handles custom action ${JSON.stringify(call.name)} (handled: ${JSON.stringify([...this.#customActions.keys()])})`,
      });
    }
    try {
      const run = Promise.resolve(
        handler({
          sessionKey: call.sessionKey,
          agentId: call.agentId,
          signal: call.signal,
          abortSignal: call.stop.signal,
        }),
      );
      return await raceStop(
        run,
        call.stop,
        () => new AbortedError({ message: `custom action ${JSON.stringify(call.name)} was stopped` }),
      );
    } catch (error) {
      if (SignalyardError.isInstance(error)) throw error;
      throw new RunnerError({
        code: 'CUSTOM_ACTION_FAILED',
        message: `Custom action ${JSON.stringify(call.name)} failed: ${errorText(error)}`,
        cause: error,
      });
    }
  }
}
