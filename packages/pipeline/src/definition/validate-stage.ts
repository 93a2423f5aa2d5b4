import { isRecord, MAX_TIMEOUT_MS } from '@signalyard/core/internal';
import { describeValue } from '@signalyard/core';
import { got, isName, type ConfigProblems, type Rec } from './config-problems.js';
import type { StageNames } from './stage-names.js';

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

/** Checks the fields of one stage (its name was checked by {@link StageNames}). @internal */
export function validateStage(stage: Rec, path: string, names: StageNames, problems: ConfigProblems): void {
  problems.unknownKeys(stage, STAGE_KEYS, `${path}.`);
  if (typeof stage.run !== 'function') problems.add(`${path}.run`, got('a function (ctx) => output', stage.run));
  if (stage.outputKey !== undefined) {
    if (!isName(stage.outputKey)) problems.add(`${path}.outputKey`, got('a non-empty string', stage.outputKey));
    else if (stage.outputKey === '__proto__') problems.add(`${path}.outputKey`, `"__proto__" cannot be an output key`);
  }
  if (stage.routingRules !== undefined) validateRules(stage.routingRules, `${path}.routingRules`, names, problems);
  if (stage.defaultNext !== undefined) names.checkTarget(stage.defaultNext, `${path}.defaultNext`);
  if (stage.errorNext !== undefined) names.checkTarget(stage.errorNext, `${path}.errorNext`);
  for (const key of ['requires', 'after'] as const) {
    const deps = stage[key];
    if (deps === undefined) continue;
    if (!Array.isArray(deps)) {
      problems.add(`${path}.${key}`, got('an array of stage names', deps));
      continue;
    }
    const list: unknown[] = deps;
    for (let d = 0; d < list.length; d++) names.checkStageRef(list[d], `${path}.${key}[${d}]`, stage.name);
  }
  if (stage.joinStrategy !== undefined && stage.joinStrategy !== 'all' && stage.joinStrategy !== 'any') {
    problems.add(`${path}.joinStrategy`, got('"all" or "any"', stage.joinStrategy));
  }
  const t = stage.timeoutMs;
  if (t !== undefined && (typeof t !== 'number' || !Number.isFinite(t) || t <= 0 || t > MAX_TIMEOUT_MS)) {
    problems.add(`${path}.timeoutMs`, got(`a positive number of milliseconds up to ${MAX_TIMEOUT_MS}`, t));
  }
}

function validateRules(rules: unknown, path: string, names: StageNames, problems: ConfigProblems): void {
  if (!Array.isArray(rules)) {
    problems.add(path, got('an array of rules { condition, value, target }', rules));
    return;
  }
  const list: unknown[] = rules;
  for (let r = 0; r < list.length; r++) {
    const rule = list[r];
    const rp = `${path}[${r}]`;
    if (!isRecord(rule)) {
      problems.add(rp, `expected a rule { condition, value, target }, got ${describeValue(rule)}`);
      continue;
    }
    problems.unknownKeys(rule, RULE_KEYS, `${rp}.`);
    if (!isName(rule.condition))
      problems.add(`${rp}.condition`, got('a non-empty string (an output key)', rule.condition));
    names.checkTarget(rule.target, `${rp}.target`);
  }
}
