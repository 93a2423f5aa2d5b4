import { ConfigError } from '@signalyard/core';
import { configProblemsFromZod } from '@signalyard/core/internal';
import type { CrewConfig, CrewConfigInput } from './crew-config.js';
import { isResolvedCrewConfig } from './crew-config-resolution.js';
import { crewConfigInputSchema } from './crew-config-schema.js';

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
  throw new ConfigError({ problems: configProblemsFromZod(result.error.issues) });
}
