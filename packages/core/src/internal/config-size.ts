import type { ConfigProblem } from '../errors/config-error.js';

/**
 * The largest configuration text (crew.yaml, routing TOML) a loader reads: 2 MiB of text
 * (2,097,152 UTF-16 code units). Real configurations are a few kilobytes; the cap keeps a
 * hostile or mistaken input (a generated file, a wrong path) from tying up the process.
 */
export const MAX_CONFIG_CHARS = 2 * 1024 * 1024;

/** The problem to report for a configuration text over {@link MAX_CONFIG_CHARS}, else `undefined`. */
export function configSizeProblem(text: string): ConfigProblem | undefined {
  if (text.length <= MAX_CONFIG_CHARS) return undefined;
  return {
    path: '',
    message: `the configuration is ${text.length.toLocaleString('en-US')} characters long, over the limit of ${MAX_CONFIG_CHARS.toLocaleString('en-US')} (2 MiB): a configuration file is a few kilobytes; check that this is the file you meant`,
  };
}
