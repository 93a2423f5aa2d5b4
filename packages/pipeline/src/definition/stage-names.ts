import { isRecord } from '@signalyard/core/internal';
import { describeValue } from '@signalyard/core';
import { got, isName, type ConfigProblems } from './config-problems.js';

/** Targets that are not stages: the end of the run and the two interrupt targets. @internal */
const SPECIAL_TARGET_NAMES: readonly string[] = Object.freeze(['end', 'clarification', 'confirmation']);

/**
 * The valid stage names of a configuration and where each is (first pass: every later check of
 * targets and dependencies is against all of them), with the checks that read them.
 * @internal
 */
export class StageNames {
  readonly byName = new Map<string, number>();
  readonly #problems: ConfigProblems;
  readonly #list: string;

  constructor(stages: readonly unknown[], problems: ConfigProblems) {
    this.#problems = problems;
    for (let i = 0; i < stages.length; i++) this.#collect(stages[i], `stages[${i}]`, i);
    this.#list = [...this.byName.keys()].map((n) => JSON.stringify(n)).join(', ');
  }

  #collect(stage: unknown, path: string, i: number): void {
    if (!isRecord(stage)) {
      this.#problems.add(path, got('a stage object { name, run, ... }', stage));
      return;
    }
    const name = stage.name;
    if (!isName(name)) this.#problems.add(`${path}.name`, got('a non-empty string', name));
    else if (SPECIAL_TARGET_NAMES.includes(name))
      this.#problems.add(
        `${path}.name`,
        `${describeValue(name)} is reserved (a routing target), choose another stage name`,
      );
    else if (name === '__proto__') this.#problems.add(`${path}.name`, `"__proto__" cannot name a stage`);
    else if (this.byName.has(name))
      this.#problems.add(
        `${path}.name`,
        `duplicate stage name ${describeValue(name)} (also stages[${this.byName.get(name) ?? 0}])`,
      );
    else this.byName.set(name, i);
  }

  /** A routing target: a stage name, `end`, `clarification` or `confirmation`. */
  checkTarget(value: unknown, path: string): void {
    if (typeof value !== 'string' || (!this.byName.has(value) && !SPECIAL_TARGET_NAMES.includes(value))) {
      this.#problems.add(
        path,
        `unknown target ${describeValue(value)}: expected a stage name (${this.#list}), "end", "clarification" or "confirmation"`,
      );
    }
  }

  /** A stage name; with `self`, not that stage. */
  checkStageRef(value: unknown, path: string, self?: unknown): void {
    if (typeof value !== 'string' || !this.byName.has(value)) {
      this.#problems.add(path, `unknown stage ${describeValue(value)}: expected one of ${this.#list}`);
    } else if (value === self) this.#problems.add(path, `a stage cannot depend on itself (${describeValue(value)})`);
  }
}
