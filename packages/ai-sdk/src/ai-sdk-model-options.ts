import { ConfigError, describeValue, type ConfigProblem } from '@signalyard/core';
import { isRecord } from '@signalyard/core/internal';
import type { JSONValue } from 'ai';

/**
 * Options of {@link aiSdkModel}: call settings applied to every request the adapter sends.
 * Anything not set is left to the AI SDK and the provider.
 */
export interface AiSdkModelOptions {
  /**
   * Provider-specific options, keyed by provider name, passed to `generateText` as they are
   * (e.g. `{ openai: { reasoningEffort: 'low' } }`).
   */
  readonly providerOptions?: Readonly<Record<string, Readonly<Record<string, JSONValue | undefined>>>>;
  /** The most tokens the model may generate per reply: a positive integer. */
  readonly maxOutputTokens?: number;
  /** Sampling temperature: a finite number ≥ 0 (the usable range depends on the provider). */
  readonly temperature?: number;
  /**
   * How many times the AI SDK retries a call that failed with a retryable provider error (rate
   * limit, server error), with exponential backoff: a non-negative integer. Default: the AI
   * SDK's (2). Set `0` to see every failure at once as `MODEL_CALL_FAILED`.
   */
  readonly maxRetries?: number;
}

const KNOWN: readonly (keyof AiSdkModelOptions)[] = ['providerOptions', 'maxOutputTokens', 'temperature', 'maxRetries'];

/** Validated settings, ready to spread into `generateText`'s arguments. @internal */
export interface CallSettings {
  providerOptions?: Record<string, Record<string, JSONValue | undefined>>;
  maxOutputTokens?: number;
  temperature?: number;
  maxRetries?: number;
}

/**
 * Checks the model and the options of {@link aiSdkModel}, reporting every problem at once, and
 * returns the settings to send plus the model's name for error messages.
 *
 * @throws ConfigError `CONFIG_INVALID` listing every problem.
 * @internal
 */
export function resolveAiSdkModelOptions(model: unknown, opts: unknown): { settings: CallSettings; label: string } {
  const problems: ConfigProblem[] = [];
  const label = modelLabel(model, problems);
  const settings = opts === undefined ? {} : callSettings(opts, problems);
  if (problems.length > 0) throw new ConfigError({ problems });
  return { settings, label };
}

/** The model's name for error messages; problems with `model` are pushed to `problems`. */
function modelLabel(model: unknown, problems: ConfigProblem[]): string {
  let label = '';
  if (typeof model === 'string') {
    if (model === '')
      problems.push({ path: 'model', message: 'expected a language model or a non-empty model id, got ""' });
    label = JSON.stringify(model);
  } else if (isRecord(model) && typeof model.doGenerate === 'function') {
    const { provider, modelId, specificationVersion } = model;
    if (specificationVersion !== 'v3' && specificationVersion !== 'v2') {
      problems.push({
        path: 'model',
        message: `unsupported model specification ${describeValue(specificationVersion)}: expected "v3" or "v2" (a provider package made for AI SDK 6 or 5)`,
      });
    }
    const id = typeof modelId === 'string' ? JSON.stringify(modelId) : 'a model';
    label = typeof provider === 'string' ? `${id} (${provider})` : id;
  } else {
    problems.push({
      path: 'model',
      message: `expected an AI SDK language model (an object with doGenerate, e.g. openai('gpt-4o-mini')) or a model id string, got ${describeValue(model)}`,
    });
  }

  return label;
}

/** The call settings in `opts`; problems are pushed to `problems`. */
function callSettings(opts: unknown, problems: ConfigProblem[]): CallSettings {
  const settings: CallSettings = {};
  if (!isRecord(opts)) {
    problems.push({ path: 'opts', message: `expected an options object, got ${describeValue(opts)}` });
  } else {
    for (const key of Object.keys(opts)) {
      if (!(KNOWN as readonly string[]).includes(key)) {
        problems.push({
          path: key,
          message: `unknown option ${JSON.stringify(key)}: expected one of ${KNOWN.map((k) => JSON.stringify(k)).join(', ')}`,
        });
      }
    }
    const { providerOptions, maxOutputTokens, temperature, maxRetries } = opts;
    if (providerOptions !== undefined) {
      if (!isRecord(providerOptions)) {
        problems.push({
          path: 'providerOptions',
          message: `expected an object of options by provider name, got ${describeValue(providerOptions)}`,
        });
      } else {
        const entries: [string, Record<string, JSONValue | undefined>][] = [];
        for (const [provider, value] of Object.entries(providerOptions)) {
          if (isRecord(value)) entries.push([provider, { ...(value as Record<string, JSONValue | undefined>) }]);
          else
            problems.push({
              path: `providerOptions.${provider}`,
              message: `expected an object of options, got ${describeValue(value)}`,
            });
        }
        // fromEntries defines own properties: a "__proto__" key stays a key.
        settings.providerOptions = Object.fromEntries(entries);
      }
    }
    if (maxOutputTokens !== undefined) {
      if (typeof maxOutputTokens === 'number' && Number.isInteger(maxOutputTokens) && maxOutputTokens > 0)
        settings.maxOutputTokens = maxOutputTokens;
      else
        problems.push({
          path: 'maxOutputTokens',
          message: `expected a positive integer, got ${describeValue(maxOutputTokens)}`,
        });
    }
    if (temperature !== undefined) {
      if (typeof temperature === 'number' && Number.isFinite(temperature) && temperature >= 0)
        settings.temperature = temperature;
      else
        problems.push({
          path: 'temperature',
          message: `expected a finite number ≥ 0, got ${describeValue(temperature)}`,
        });
    }
    if (maxRetries !== undefined) {
      if (typeof maxRetries === 'number' && Number.isInteger(maxRetries) && maxRetries >= 0)
        settings.maxRetries = maxRetries;
      else
        problems.push({
          path: 'maxRetries',
          message: `expected a non-negative integer, got ${describeValue(maxRetries)}`,
        });
    }
  }
  return settings;
}
