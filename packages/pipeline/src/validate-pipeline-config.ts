import { describeValue, type ConfigProblem } from '@signalyard/core';
import { INTERRUPT_KINDS, isInterruptKind } from './interrupt.js';

/** Targets that are not stages: the end of the run and the two interrupt targets. */
export const SPECIAL_TARGETS: readonly string[] = Object.freeze(['end', 'clarification', 'confirmation']);

const PIPELINE_KEYS = [
  'name',
  'stages',
  'maxIterations',
  'maxLlmCalls',
  'maxAgentHops',
  'edgeLimits',
  'clarificationResumeStage',
  'confirmationResumeStage',
  'interruptTtlMs',
];
const STAGE_KEYS = [
  'name',
  'run',
  'outputKey',
  'routingRules',
  'defaultNext',
  'errorNext',
  'requires',
  'after',
  'joinStrategy',
  'timeoutMs',
];
const RULE_KEYS = ['condition', 'value', 'target'];
const EDGE_KEYS = ['from', 'to', 'maxCount'];
/** setTimeout's largest delay; larger ones fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;

type Rec = Record<string, unknown>;

function isRecord(value: unknown): value is Rec {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/**
 * Every problem in a pipeline configuration, in the order found (see `definePipeline`).
 * @internal
 */
export function validatePipelineConfig(config: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: string, message: string): void => {
    problems.push({ path, message });
  };
  if (!isRecord(config)) {
    add('', `expected a pipeline configuration object { name, stages, ... }, got ${describeValue(config)}`);
    return problems;
  }
  unknownKeys(config, PIPELINE_KEYS, '', add);
  if (!isName(config.name)) add('name', `expected a non-empty string, got ${describeValue(config.name)}`);

  // Pass 1: stage names, so targets and dependencies can be checked against all of them.
  const stages: unknown[] = Array.isArray(config.stages) ? config.stages : [];
  if (!Array.isArray(config.stages)) add('stages', `expected an array of stages, got ${describeValue(config.stages)}`);
  else if (stages.length === 0) add('stages', 'expected at least one stage, got an empty array');
  const names = new Map<string, number>();
  for (let i = 0; i < stages.length; i++) {
    const stage = stages[i];
    const path = `stages[${i}]`;
    if (!isRecord(stage)) {
      add(path, `expected a stage object { name, run, ... }, got ${describeValue(stage)}`);
      continue;
    }
    const name = stage.name;
    if (!isName(name)) add(`${path}.name`, `expected a non-empty string, got ${describeValue(name)}`);
    else if (SPECIAL_TARGETS.includes(name))
      add(`${path}.name`, `${describeValue(name)} is reserved (a routing target), choose another stage name`);
    else if (name === '__proto__') add(`${path}.name`, `"__proto__" cannot name a stage`);
    else if (names.has(name))
      add(`${path}.name`, `duplicate stage name ${describeValue(name)} (also stages[${names.get(name) ?? 0}])`);
    else names.set(name, i);
  }
  const stageList = [...names.keys()];
  const expectTarget = `a stage name (${stageList.map((n) => JSON.stringify(n)).join(', ')}), "end", "clarification" or "confirmation"`;
  const checkTarget = (value: unknown, path: string): void => {
    if (typeof value !== 'string' || (!names.has(value) && !SPECIAL_TARGETS.includes(value))) {
      add(path, `unknown target ${describeValue(value)}: expected ${expectTarget}`);
    }
  };
  const checkStageRef = (value: unknown, path: string, self?: unknown): void => {
    if (typeof value !== 'string' || !names.has(value)) {
      add(
        path,
        `unknown stage ${describeValue(value)}: expected one of ${stageList.map((n) => JSON.stringify(n)).join(', ')}`,
      );
    } else if (value === self) add(path, `a stage cannot depend on itself (${describeValue(value)})`);
  };

  // Pass 2: each stage's fields.
  for (let i = 0; i < stages.length; i++) {
    const stage = stages[i];
    if (!isRecord(stage)) continue;
    const path = `stages[${i}]`;
    unknownKeys(stage, STAGE_KEYS, `${path}.`, add);
    if (typeof stage.run !== 'function')
      add(`${path}.run`, `expected a function (ctx) => output, got ${describeValue(stage.run)}`);
    if (stage.outputKey !== undefined) {
      if (!isName(stage.outputKey))
        add(`${path}.outputKey`, `expected a non-empty string, got ${describeValue(stage.outputKey)}`);
      else if (stage.outputKey === '__proto__') add(`${path}.outputKey`, `"__proto__" cannot be an output key`);
    }
    if (stage.routingRules !== undefined) {
      if (!Array.isArray(stage.routingRules)) {
        add(
          `${path}.routingRules`,
          `expected an array of rules { condition, value, target }, got ${describeValue(stage.routingRules)}`,
        );
      } else {
        const rules: unknown[] = stage.routingRules;
        for (let r = 0; r < rules.length; r++) {
          const rule = rules[r];
          const rp = `${path}.routingRules[${r}]`;
          if (!isRecord(rule)) {
            add(rp, `expected a rule { condition, value, target }, got ${describeValue(rule)}`);
            continue;
          }
          unknownKeys(rule, RULE_KEYS, `${rp}.`, add);
          if (!isName(rule.condition))
            add(`${rp}.condition`, `expected a non-empty string (an output key), got ${describeValue(rule.condition)}`);
          checkTarget(rule.target, `${rp}.target`);
        }
      }
    }
    if (stage.defaultNext !== undefined) checkTarget(stage.defaultNext, `${path}.defaultNext`);
    if (stage.errorNext !== undefined) checkTarget(stage.errorNext, `${path}.errorNext`);
    for (const key of ['requires', 'after'] as const) {
      const deps = stage[key];
      if (deps === undefined) continue;
      if (!Array.isArray(deps)) {
        add(`${path}.${key}`, `expected an array of stage names, got ${describeValue(deps)}`);
        continue;
      }
      const list: unknown[] = deps;
      for (let d = 0; d < list.length; d++) checkStageRef(list[d], `${path}.${key}[${d}]`, stage.name);
    }
    if (stage.joinStrategy !== undefined && stage.joinStrategy !== 'all' && stage.joinStrategy !== 'any') {
      add(`${path}.joinStrategy`, `expected "all" or "any", got ${describeValue(stage.joinStrategy)}`);
    }
    if (stage.timeoutMs !== undefined) {
      const t = stage.timeoutMs;
      if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0 || t > MAX_TIMEOUT_MS) {
        add(
          `${path}.timeoutMs`,
          `expected a positive number of milliseconds up to ${MAX_TIMEOUT_MS}, got ${describeValue(t)}`,
        );
      }
    }
  }
  requiresCycles(stages, names, add);

  for (const key of ['maxIterations', 'maxLlmCalls', 'maxAgentHops'] as const) {
    const v = config[key];
    if (v !== undefined && (typeof v !== 'number' || Number.isNaN(v) || v <= 0)) {
      add(key, `expected a positive number (Infinity for no bound), got ${describeValue(v)}`);
    }
  }

  if (config.edgeLimits !== undefined) {
    if (!Array.isArray(config.edgeLimits)) {
      add('edgeLimits', `expected an array of { from, to, maxCount }, got ${describeValue(config.edgeLimits)}`);
    } else {
      const seen = new Map<string, number>();
      const limits: unknown[] = config.edgeLimits;
      for (let e = 0; e < limits.length; e++) {
        const limit = limits[e];
        const ep = `edgeLimits[${e}]`;
        if (!isRecord(limit)) {
          add(ep, `expected { from, to, maxCount }, got ${describeValue(limit)}`);
          continue;
        }
        unknownKeys(limit, EDGE_KEYS, `${ep}.`, add);
        checkStageRef(limit.from, `${ep}.from`);
        checkStageRef(limit.to, `${ep}.to`);
        const max = limit.maxCount;
        if (typeof max !== 'number' || Number.isNaN(max) || max < 1) {
          add(`${ep}.maxCount`, `expected a number >= 1, got ${describeValue(max)}`);
        }
        if (typeof limit.from === 'string' && typeof limit.to === 'string') {
          const key = `${limit.from}->${limit.to}`;
          const first = seen.get(key);
          if (first !== undefined) add(ep, `duplicate edge limit for ${key} (also edgeLimits[${first}])`);
          else seen.set(key, e);
        }
      }
    }
  }

  for (const key of ['clarificationResumeStage', 'confirmationResumeStage'] as const) {
    if (config[key] !== undefined) checkStageRef(config[key], key);
  }

  if (config.interruptTtlMs !== undefined) {
    if (!isRecord(config.interruptTtlMs)) {
      add(
        'interruptTtlMs',
        `expected an object of milliseconds per interrupt kind, got ${describeValue(config.interruptTtlMs)}`,
      );
    } else {
      const ttl = config.interruptTtlMs;
      for (const kind of Object.keys(ttl)) {
        const v = ttl[kind];
        if (!isInterruptKind(kind))
          add(
            `interruptTtlMs.${kind}`,
            `unknown interrupt kind ${describeValue(kind)}: expected one of ${INTERRUPT_KINDS.join(', ')}`,
          );
        else if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)) {
          add(`interruptTtlMs.${kind}`, `expected a positive number of milliseconds, got ${describeValue(v)}`);
        }
      }
    }
  }
  return problems;
}

function unknownKeys(
  o: Rec,
  allowed: readonly string[],
  prefix: string,
  add: (path: string, message: string) => void,
): void {
  for (const key of Object.keys(o)) {
    if (!allowed.includes(key))
      add(`${prefix}${key}`, `unknown key ${JSON.stringify(key)}: expected one of ${allowed.join(', ')}`);
  }
}

/** Reports each dependency cycle in `requires` once, at the stage where it was closed. */
function requiresCycles(
  stages: readonly unknown[],
  names: ReadonlyMap<string, number>,
  add: (path: string, message: string) => void,
): void {
  const deps = (i: number): number[] => {
    const stage = stages[i];
    if (!isRecord(stage) || !Array.isArray(stage.requires)) return [];
    const out: number[] = [];
    for (const d of stage.requires as unknown[]) {
      const j = typeof d === 'string' ? names.get(d) : undefined;
      if (j !== undefined && j !== i) out.push(j);
    }
    return out;
  };
  const state = new Array<number>(stages.length).fill(0); // 0 new, 1 on the path, 2 done
  const path: number[] = [];
  const reported = new Set<string>();
  const nameOf = (i: number): string => (stages[i] as Rec).name as string;
  const visit = (i: number): void => {
    state[i] = 1;
    path.push(i);
    for (const j of deps(i)) {
      if (state[j] === 1) {
        const cycle = path.slice(path.indexOf(j));
        const key = [...cycle].sort((a, b) => a - b).join(',');
        if (!reported.has(key)) {
          reported.add(key);
          const text = [...cycle, j].map(nameOf).join(' -> ');
          add(`stages[${i}].requires`, `dependency cycle in requires: ${text} (each stage requires the next)`);
        }
      } else if (state[j] === 0) visit(j);
    }
    path.pop();
    state[i] = 2;
  };
  for (const i of names.values()) if (state[i] === 0) visit(i);
}
