import { crewGraphOf, type CrewGraph } from '@signalyard/core/internal';
import { resolveCrewConfig, type CrewConfig, type CrewConfigInput } from '@signalyard/crew';

export type {
  CrewGraph,
  CrewGraphAgent,
  CrewGraphEdge,
  CrewGraphGroup,
  CrewGraphTermination,
} from '@signalyard/core/internal';

/**
 * Builds the {@link CrewGraph} of a crew: who hands off to whom, through which marker, which
 * parallel groups fan out to whom and who continues after them, and how runs end.
 *
 * Accepts a `CrewConfig` from `parseCrewConfig` / `loadCrewConfig` or a crew written in code
 * (validated with the crew.yaml rules first). Pure and deterministic: the same crew always gives
 * the same graph (see {@link CrewGraph} for the order).
 *
 * @throws ConfigError (`CONFIG_INVALID`) listing every problem when `crew` is not a valid crew.
 * @example
 * ```ts
 * const graph = buildCrewGraph(parseCrewConfig(await readFile('crew.yaml', 'utf8')));
 * graph.edges.filter((e) => e.kind === 'signal').map((e) => `${e.from} -[${e.signal}]-> ${e.to}`);
 * ```
 */
export function buildCrewGraph(crew: CrewConfig | CrewConfigInput): CrewGraph {
  return crewGraphOf(resolveCrewConfig(crew));
}
