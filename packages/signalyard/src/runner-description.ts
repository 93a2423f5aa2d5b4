import {
  formatAction,
  type AgentDescription,
  type AgentDiagrams,
  type DescribedRoute,
  type ExecutionStrategy,
  type RunnerDescription,
  type SignalRoute,
  type Tier,
} from '@signalyard/core';
import type { AgentRuntime } from './runner-options.js';
import { newStrategy } from './session-persistence.js';

/**
 * What a runner serves, for tooling (the inspector's diagrams, docs): each agent with the routes
 * of a fresh session, its strategy type and its diagrams. A fresh strategy instance is made per
 * agent to read its routes and diagram (so a factory must not have side effects beyond making one).
 * @throws RunnerError `STRATEGY_FACTORY_FAILED` when an agent's strategy factory throws.
 * @internal
 */
export function describeRunner(
  agents: ReadonlyMap<string, AgentRuntime>,
  pluginRoutes: readonly SignalRoute[],
): RunnerDescription {
  return { agents: [...agents.values()].map((agent) => describeAgent(agent, pluginRoutes)) };
}

function describeAgent(agent: AgentRuntime, pluginRoutes: readonly SignalRoute[]): AgentDescription {
  const strategy = newStrategy(agent);
  const routes = [
    ...describeTier('strategy', strategy.signalRoutes()),
    ...describeTier('agent', agent.routes),
    ...describeTier('plugin', pluginRoutes),
  ];
  const fsm = fsmMermaid(strategy);
  const engine = agent.definition.engine;
  const own = typeof engine === 'object' && typeof engine.diagrams === 'function' ? engine.diagrams() : {};
  const diagrams: AgentDiagrams = {
    ...(fsm !== undefined && { fsm }),
    ...(typeof own.crew === 'string' && { crew: own.crew }),
    ...(typeof own.pipeline === 'string' && { pipeline: own.pipeline }),
  };
  return { id: agent.id, strategy: strategy.snapshot().type, routes, diagrams };
}

/** A tier's routes in evaluation order: priority, highest first; ties in registration order. */
function describeTier(tier: Tier, routes: readonly SignalRoute[]): DescribedRoute[] {
  const described = routes.map((r, index) => ({ r, index }));
  described.sort((a, b) => (b.r.priority ?? 0) - (a.r.priority ?? 0) || a.index - b.index);
  return described.map(({ r }) => ({
    ...(r.name !== undefined && r.name !== '' && { name: r.name }),
    kind: r.kind,
    tier,
    priority: r.priority ?? 0,
    action: formatAction(r.action),
    conditional: r.predicate !== undefined,
  }));
}

/** The strategy's Mermaid state diagram, when it is a state machine that draws one (`@signalyard/fsm`). */
function fsmMermaid(strategy: ExecutionStrategy): string | undefined {
  const draw = (strategy as { toMermaid?: unknown }).toMermaid;
  if (typeof draw !== 'function') return undefined;
  const text: unknown = draw.call(strategy);
  return typeof text === 'string' ? text : undefined;
}
