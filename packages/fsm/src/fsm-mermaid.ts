const PLAIN = /^[A-Za-z0-9_]+$/;

/**
 * Renders the Mermaid `stateDiagram-v2` of fsm.md's "Mermaid" section. Aliases are `s0`, `s1`, …
 * in order of first appearance, skipping any that is itself the name of a state (a state named
 * `s0` keeps its name, and `"a b"` becomes `s1`): an alias never stands for two states.
 */
export function renderMermaid(spec: {
  states: readonly string[];
  initial: string;
  transitions: readonly { from: string; to: string; action: string; guardName: string | undefined }[];
  finals: readonly string[];
}): string {
  const taken = new Set(spec.states);
  const aliases = new Map<string, string>();
  let next = 0;
  const declarations: string[] = [];
  const ref = (state: string): string => {
    if (PLAIN.test(state)) return state;
    let alias = aliases.get(state);
    if (alias === undefined) {
      do alias = `s${next++}`;
      while (taken.has(alias));
      aliases.set(state, alias);
      declarations.push(`    state "${state.replace(/"/g, '#quot;').replace(/[\r\n]+/g, ' ')}" as ${alias}`);
    }
    return alias;
  };
  const oneLine = (text: string): string => text.replace(/[\r\n]+/g, ' ');
  const body: string[] = [`    [*] --> ${ref(spec.initial)}`];
  for (const t of spec.transitions) {
    const from = ref(t.from);
    const to = ref(t.to);
    body.push(
      `    ${from} --> ${to} : ${oneLine(t.action)}${t.guardName === undefined ? '' : ` [${oneLine(t.guardName)}]`}`,
    );
  }
  for (const state of spec.finals) body.push(`    ${ref(state)} --> [*]`);
  return ['stateDiagram-v2', ...declarations, ...body].join('\n');
}
