import type { PolicySpelling } from '@signalyard/core/internal';

// One schema builder, two spellings: crew.yaml's snake_case keys (the exported
// `crewConfigSchema`) and the camelCase keys of a crew written in code (`resolveCrewConfig`).
// Same rules, same messages; only the key names differ. This file holds the two spellings.

/** The key names of one spelling, indexed by their camelCase name. @internal */
export interface CrewKeys {
  readonly entryPoint: string;
  readonly agents: string;
  readonly settings: string;
  readonly routing: string;
  readonly approvals: string;
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly systemPrompt: string;
  readonly handoffTargets: string;
  readonly tools: string;
  readonly mcp: string;
  readonly maxHandoffs: string;
  readonly maxRounds: string;
  readonly maxToolRounds: string;
  readonly maxHistoryMessages: string;
  readonly parallelTimeoutSeconds: string;
  readonly hideSignals: string;
  readonly handoffMode: string;
  readonly resumeAt: string;
  readonly signals: string;
  readonly agentBehaviors: string;
  readonly parallelGroups: string;
  readonly signal: string;
  readonly target: string;
  readonly tool: string;
  readonly waitForSignal: string;
  readonly isTerminal: string;
  readonly timeoutSeconds: string;
  readonly waitForAll: string;
  readonly nextAgent: string;
}

/** The camelCase spelling (a crew written in code). @internal */
export const CAMEL_KEYS: CrewKeys = Object.freeze({
  entryPoint: 'entryPoint',
  agents: 'agents',
  settings: 'settings',
  routing: 'routing',
  approvals: 'approvals',
  id: 'id',
  name: 'name',
  description: 'description',
  systemPrompt: 'systemPrompt',
  handoffTargets: 'handoffTargets',
  tools: 'tools',
  mcp: 'mcp',
  maxHandoffs: 'maxHandoffs',
  maxRounds: 'maxRounds',
  maxToolRounds: 'maxToolRounds',
  maxHistoryMessages: 'maxHistoryMessages',
  parallelTimeoutSeconds: 'parallelTimeoutSeconds',
  hideSignals: 'hideSignals',
  handoffMode: 'handoffMode',
  resumeAt: 'resumeAt',
  signals: 'signals',
  agentBehaviors: 'agentBehaviors',
  parallelGroups: 'parallelGroups',
  signal: 'signal',
  target: 'target',
  tool: 'tool',
  waitForSignal: 'waitForSignal',
  isTerminal: 'isTerminal',
  timeoutSeconds: 'timeoutSeconds',
  waitForAll: 'waitForAll',
  nextAgent: 'nextAgent',
});

const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** The snake_case spelling (crew.yaml). @internal */
export const SNAKE_KEYS: CrewKeys = Object.freeze(
  Object.fromEntries(
    (Object.entries(CAMEL_KEYS) as [string, string][]).map(([k, v]) => [k, snake(v)]),
  ) as unknown as CrewKeys,
);

/** The approval policy's spelling that goes with `k`. @internal */
export function policySpelling(k: CrewKeys): PolicySpelling {
  return k === SNAKE_KEYS ? 'snake_case' : 'camelCase';
}

/** A mapping of config data (already known to be a record). @internal */
export type Obj = Readonly<Record<string, unknown>>;

/** `o[key]` when `key` is `o`'s own (never an inherited `constructor` or `__proto__`). @internal */
export const own = (o: Obj, key: string): unknown =>
  Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined;
