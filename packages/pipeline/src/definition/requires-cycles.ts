import { isRecord } from '@signalyard/core/internal';
import { type ConfigProblems, type Rec } from './config-problems.js';

/** Reports each dependency cycle in `requires` once, at the stage where it was closed. @internal */
export function checkRequiresCycles(
  stages: readonly unknown[],
  names: ReadonlyMap<string, number>,
  problems: ConfigProblems,
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
          problems.add(`stages[${i}].requires`, `dependency cycle in requires: ${text} (each stage requires the next)`);
        }
      } else if (state[j] === 0) visit(j);
    }
    path.pop();
    state[i] = 2;
  };
  for (const i of names.values()) if (state[i] === 0) visit(i);
}
