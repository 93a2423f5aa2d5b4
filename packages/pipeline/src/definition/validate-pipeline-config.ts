import { isRecord } from '@signalyard/core/internal';
import type { ConfigProblem } from '@signalyard/core';
import { INTERRUPT_KINDS, isInterruptKind } from '../envelope/interrupt.js';
import { messageOf } from '../shared/error-message.js';
import { ConfigProblems, got, isName, type Rec } from './config-problems.js';
import { checkRequiresCycles } from './requires-cycles.js';
import { StageNames } from './stage-names.js';
import { validateStage } from './validate-stage.js';

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
const EDGE_KEYS = ['from', 'to', 'maxCount'];

/**
 * Every problem in a pipeline configuration, in the order found (see `definePipeline`). Never
 * throws: a configuration whose reading throws (a throwing getter, a hostile proxy) has that as
 * its problem.
 * @internal
 */
export function validatePipelineConfig(config: unknown): ConfigProblem[] {
  const problems = new ConfigProblems();
  try {
    validate(config, problems);
  } catch (error) {
    problems.add('', `reading the configuration threw: ${messageOf(error)}`);
  }
  return problems.list;
}

function validate(config: unknown, problems: ConfigProblems): void {
  if (!isRecord(config)) {
    problems.add('', got('a pipeline configuration object { name, stages, ... }', config));
    return;
  }
  problems.unknownKeys(config, PIPELINE_KEYS, '');
  if (!isName(config.name)) problems.add('name', got('a non-empty string', config.name));

  const stages: unknown[] = Array.isArray(config.stages) ? config.stages : [];
  if (!Array.isArray(config.stages)) problems.add('stages', got('an array of stages', config.stages));
  else if (stages.length === 0) problems.add('stages', 'expected at least one stage, got an empty array');
  const names = new StageNames(stages, problems);
  for (let i = 0; i < stages.length; i++) {
    const stage = stages[i];
    if (isRecord(stage)) validateStage(stage, `stages[${i}]`, names, problems);
  }
  checkRequiresCycles(stages, names.byName, problems);

  for (const key of ['maxIterations', 'maxLlmCalls', 'maxAgentHops'] as const) {
    const v = config[key];
    if (v !== undefined && (typeof v !== 'number' || Number.isNaN(v) || v <= 0)) {
      problems.add(key, got('a positive number (Infinity for no bound)', v));
    }
  }
  if (config.edgeLimits !== undefined) validateEdgeLimits(config.edgeLimits, names, problems);
  for (const key of ['clarificationResumeStage', 'confirmationResumeStage'] as const) {
    if (config[key] !== undefined) names.checkStageRef(config[key], key);
  }
  if (config.interruptTtlMs !== undefined) validateTtl(config.interruptTtlMs, problems);
}

function validateEdgeLimits(value: unknown, names: StageNames, problems: ConfigProblems): void {
  if (!Array.isArray(value)) {
    problems.add('edgeLimits', got('an array of { from, to, maxCount }', value));
    return;
  }
  const seen = new Map<string, number>();
  const limits: unknown[] = value;
  for (let e = 0; e < limits.length; e++) {
    const limit = limits[e];
    const ep = `edgeLimits[${e}]`;
    if (!isRecord(limit)) {
      problems.add(ep, got('{ from, to, maxCount }', limit));
      continue;
    }
    problems.unknownKeys(limit, EDGE_KEYS, `${ep}.`);
    names.checkStageRef(limit.from, `${ep}.from`);
    names.checkStageRef(limit.to, `${ep}.to`);
    const max = limit.maxCount;
    if (typeof max !== 'number' || Number.isNaN(max) || max < 1)
      problems.add(`${ep}.maxCount`, got('a number >= 1', max));
    if (typeof limit.from === 'string' && typeof limit.to === 'string') {
      const key = `${limit.from}->${limit.to}`;
      const first = seen.get(key);
      if (first !== undefined) problems.add(ep, `duplicate edge limit for ${key} (also edgeLimits[${first}])`);
      else seen.set(key, e);
    }
  }
}

function validateTtl(value: unknown, problems: ConfigProblems): void {
  if (!isRecord(value)) {
    problems.add('interruptTtlMs', got('an object of milliseconds per interrupt kind', value));
    return;
  }
  const ttl: Rec = value;
  for (const kind of Object.keys(ttl)) {
    const v = ttl[kind];
    if (!isInterruptKind(kind))
      problems.add(
        `interruptTtlMs.${kind}`,
        `unknown interrupt kind ${JSON.stringify(kind)}: expected one of ${INTERRUPT_KINDS.join(', ')}`,
      );
    else if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)) {
      problems.add(`interruptTtlMs.${kind}`, got('a positive number of milliseconds', v));
    }
  }
}
