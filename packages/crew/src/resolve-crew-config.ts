import { ConfigError, type ConfigProblem } from '@signalyard/core';
import type * as z from 'zod';
import type { CrewConfig, CrewConfigInput } from './crew-config.js';
import { crewConfigInputSchema, formatPath, isResolvedCrewConfig } from './crew-config-schema.js';

/**
 * Validates a crew written in code and returns it as a {@link CrewConfig}: defaults filled in,
 * deeply frozen. The rules are crew.yaml's (see `crewConfigSchema`), over the camelCase keys;
 * problem paths use those keys (`routing.agentBehaviors.reporter`). A config that already came
 * out of `parseCrewConfig`, `loadCrewConfig` or this function is returned as is.
 *
 * @throws ConfigError (`CONFIG_INVALID`) listing every problem with its path.
 *
 * @example
 * ```ts
 * const crew = resolveCrewConfig({
 *   entryPoint: 'teacher',
 *   agents: [{ id: 'teacher' }, { id: 'student' }],
 *   routing: { signals: { teacher: [{ signal: '[ASK]', target: 'student' }, { signal: '[END]', target: '' }] } },
 * });
 * crew.settings.maxHandoffs;   // 5
 * ```
 */
export function resolveCrewConfig(config: CrewConfigInput): CrewConfig {
  if (isResolvedCrewConfig(config)) return config;
  const result = crewConfigInputSchema.safeParse(config);
  if (result.success) return result.data;
  throw new ConfigError({ problems: result.error.issues.map((issue) => issueProblem(issue)) });
}

/** A zod issue as a {@link ConfigProblem} (path formatted, no line). */
export function issueProblem(issue: z.core.$ZodIssue, position?: { line: number; column: number }): ConfigProblem {
  return { path: formatPath(issue.path), message: issue.message, ...position };
}
