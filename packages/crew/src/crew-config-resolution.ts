import type { ApprovalPolicy, McpToolView } from '@signalyard/core';
import { approvalPolicyProblems } from '@signalyard/core/internal';
import {
  DEFAULT_CREW_SETTINGS,
  type AgentBehavior,
  type CrewAgentConfig,
  type CrewConfig,
  type CrewRouting,
  type CrewSettings,
  type HandoffMode,
  type ParallelGroupConfig,
  type ResumeAt,
  type RoutingSignal,
} from './crew-config.js';
import { own, policySpelling, type CrewKeys, type Obj } from './crew-config-keys.js';

// From data the schema has accepted (in either spelling) to the frozen camelCase CrewConfig,
// every default filled in.

/** Every config this module produced (validated and frozen): resolving one again is free. */
const resolvedConfigs = new WeakSet<object>();

/** True when `config` came out of a crew schema (so it needs no validation). @internal */
export function isResolvedCrewConfig(config: unknown): config is CrewConfig {
  return typeof config === 'object' && config !== null && resolvedConfigs.has(config);
}

const frozenList = (value: unknown): readonly string[] =>
  Object.freeze(Array.isArray(value) ? (value as string[]).slice() : []);
function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** Builds the frozen camelCase {@link CrewConfig} from data the schema has accepted. @internal */
export function resolveAccepted(data: Obj, k: CrewKeys): CrewConfig {
  const settings = resolveSettings((own(data, k.settings) ?? {}) as Obj, k);
  const approvals = approvalsOf(own(data, k.approvals), k);
  const config: CrewConfig = Object.freeze({
    entryPoint: own(data, k.entryPoint) as string,
    agents: resolveAgents(own(data, k.agents) as Obj[], k),
    settings,
    routing: resolveRouting((own(data, k.routing) ?? {}) as Obj, k, settings),
    ...(approvals === undefined ? {} : { approvals }),
  });
  resolvedConfigs.add(config);
  return config;
}

function resolveAgents(agents: readonly Obj[], k: CrewKeys): readonly CrewAgentConfig[] {
  return Object.freeze(
    agents.map((a): CrewAgentConfig => {
      const name = own(a, k.name) as string | undefined;
      const description = own(a, k.description) as string | undefined;
      const systemPrompt = own(a, k.systemPrompt) as string | undefined;
      const mcp = own(a, k.mcp) as readonly McpToolView[] | undefined;
      return Object.freeze({
        id: own(a, k.id) as string,
        ...(name === undefined ? {} : { name }),
        ...(description === undefined ? {} : { description }),
        ...(systemPrompt === undefined ? {} : { systemPrompt }),
        handoffTargets: frozenList(own(a, k.handoffTargets)),
        tools: frozenList(own(a, k.tools)),
        ...(mcp === undefined || mcp.length === 0 ? {} : { mcp: Object.freeze(mcp.map(frozenView)) }),
      });
    }),
  );
}

function resolveSettings(s: Obj, k: CrewKeys): CrewSettings {
  const setting = (key: Exclude<keyof CrewSettings, 'hideSignals' | 'handoffMode' | 'resumeAt'>): number =>
    (own(s, k[key]) as number | undefined) ?? DEFAULT_CREW_SETTINGS[key];
  return Object.freeze({
    maxHandoffs: setting('maxHandoffs'),
    maxRounds: setting('maxRounds'),
    maxToolRounds: setting('maxToolRounds'),
    maxHistoryMessages: setting('maxHistoryMessages'),
    parallelTimeoutSeconds: setting('parallelTimeoutSeconds'),
    hideSignals: (own(s, k.hideSignals) as boolean | undefined) ?? DEFAULT_CREW_SETTINGS.hideSignals,
    handoffMode: (own(s, k.handoffMode) as HandoffMode | undefined) ?? DEFAULT_CREW_SETTINGS.handoffMode,
    resumeAt: (own(s, k.resumeAt) as ResumeAt | undefined) ?? DEFAULT_CREW_SETTINGS.resumeAt,
  });
}

function resolveRouting(r: Obj, k: CrewKeys, settings: CrewSettings): CrewRouting {
  const signals = dict<readonly RoutingSignal[]>();
  for (const [agentId, entries] of Object.entries((own(r, k.signals) ?? {}) as Obj)) {
    signals[agentId] = Object.freeze(
      (entries as Obj[]).map((e): RoutingSignal => {
        const description = own(e, k.description) as string | undefined;
        const tool = own(e, k.tool) as string | undefined;
        return Object.freeze({
          signal: own(e, k.signal) as string,
          target: own(e, k.target) as string,
          ...(description === undefined ? {} : { description }),
          ...(tool === undefined ? {} : { tool }),
        });
      }),
    );
  }
  const agentBehaviors = dict<AgentBehavior>();
  for (const [agentId, b] of Object.entries((own(r, k.agentBehaviors) ?? {}) as Obj)) {
    agentBehaviors[agentId] = Object.freeze({
      waitForSignal: (own(b as Obj, k.waitForSignal) as boolean | undefined) ?? false,
      isTerminal: (own(b as Obj, k.isTerminal) as boolean | undefined) ?? false,
    });
  }
  const parallelGroups = dict<ParallelGroupConfig>();
  for (const [name, g] of Object.entries((own(r, k.parallelGroups) ?? {}) as Obj)) {
    const nextAgent = own(g as Obj, k.nextAgent) as string | undefined;
    parallelGroups[name] = Object.freeze({
      agents: frozenList(own(g as Obj, k.agents)),
      timeoutSeconds: (own(g as Obj, k.timeoutSeconds) as number | undefined) ?? settings.parallelTimeoutSeconds,
      waitForAll: (own(g as Obj, k.waitForAll) as boolean | undefined) ?? true,
      ...(nextAgent === undefined ? {} : { nextAgent }),
    });
  }
  return Object.freeze({
    signals: Object.freeze(signals),
    agentBehaviors: Object.freeze(agentBehaviors),
    parallelGroups: Object.freeze(parallelGroups),
  });
}

/** The validated, deep-frozen camelCase policy of an accepted `approvals` section (absent: `undefined`). */
function approvalsOf(value: unknown, k: CrewKeys): ApprovalPolicy | undefined {
  if (value === undefined) return undefined;
  return approvalPolicyProblems(value, policySpelling(k)).policy;
}

/** One `mcp:` view, copied and frozen (its lists too). */
function frozenView(view: McpToolView): McpToolView {
  return Object.freeze({
    server: view.server,
    ...(view.allow === undefined ? {} : { allow: Object.freeze([...view.allow]) }),
    ...(view.deny === undefined ? {} : { deny: Object.freeze([...view.deny]) }),
    ...(view.prefix === undefined ? {} : { prefix: view.prefix }),
  });
}
