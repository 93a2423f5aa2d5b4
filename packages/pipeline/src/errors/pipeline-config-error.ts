import { ConfigError, hasErrorMarker, type ConfigErrorCode, type ConfigProblem } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.PipelineConfigError');

/**
 * The code of {@link PipelineConfigError}: core's `ConfigErrorCode` (`CONFIG_INVALID`), which
 * every subclass of `ConfigError` keeps; `ConfigError` owns it.
 */
export type PipelineConfigErrorCode = ConfigErrorCode;

/**
 * A pipeline configuration given to `definePipeline` is invalid (code `CONFIG_INVALID`, as every
 * core `ConfigError`).
 *
 * `problems` lists **every** problem found, each with the `path` of the bad
 * value in the configuration (`stages[2].routingRules[0].target`) and a message naming the value
 * and what was expected: empty or duplicate names, unknown targets, `requires` / `after` naming
 * unknown stages or the stage itself, `requires` cycles, bad edge limits, non-positive bounds,
 * unknown keys. Tell it apart from other config errors with {@link PipelineConfigError.isInstance}.
 *
 * @example
 * ```ts
 * try {
 *   definePipeline({ name: 'review', stages: [{ name: 'draft', run, defaultNext: 'reveiw' }] });
 * } catch (error) {
 *   if (PipelineConfigError.isInstance(error)) for (const p of error.problems) console.error(`${p.path}: ${p.message}`);
 * }
 * ```
 */
export class PipelineConfigError extends ConfigError {
  private readonly [marker] = true;
  declare readonly code: PipelineConfigErrorCode;
  /** The pipeline's name, when the configuration had a usable one. */
  readonly pipeline?: string;

  constructor(options: { problems: readonly ConfigProblem[]; pipeline?: string }) {
    super({ problems: options.problems });
    if (options.pipeline !== undefined) {
      this.pipeline = options.pipeline;
      this.message = this.message.replace(
        /^Invalid configuration/,
        `Invalid pipeline ${JSON.stringify(options.pipeline)}`,
      );
    }
  }

  /** True when `error` is a `PipelineConfigError` (or a subclass), from any installed copy of the pipeline package. */
  static override isInstance(error: unknown): error is PipelineConfigError {
    return hasErrorMarker(error, marker);
  }
}
