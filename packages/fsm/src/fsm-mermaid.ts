/** Renders the Mermaid `stateDiagram-v2` of fsm.md's "Mermaid" section. */
export function renderMermaid(spec: {
  initial: string;
  transitions: readonly { from: string; to: string; action: string; guardName: string | undefined }[];
  finals: readonly string[];
}): string {
  const aliases = new Map<string, string>();
  const declarations: string[] = [];
  const ref = (state: string): string => {
    if (/^[A-Za-z0-9_]+$/.test(state)) return state;
    let alias = aliases.get(state);
    if (alias === undefined) {
      alias = `s${aliases.size}`;
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
