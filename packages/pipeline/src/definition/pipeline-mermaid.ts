import type { CompiledPipeline, CompiledStage, CompiledTarget } from './compiled-pipeline.js';
import { ruleLabel } from './rule-label.js';

/** Escapes text for a quoted Mermaid label. */
function label(text: string): string {
  return `"${text.replace(/&/g, '#amp;').replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;')}"`;
}

/**
 * Renders a compiled pipeline as a Mermaid flowchart. Node ids are positional (`s0`, `s1`, …)
 * so any stage name is safe; names appear as labels.
 * @internal
 */
export function pipelineToMermaid(p: CompiledPipeline): string {
  const lines: string[] = ['flowchart TD'];
  const used = new Set<string>();
  const id = (t: CompiledTarget): string => {
    if (t.stage !== undefined) return `s${t.stage.index}`;
    used.add(t.name);
    return `${t.name}_`;
  };
  lines.push('  start_([start])');
  for (const s of p.stages) lines.push(`  s${s.index}[${label(s.name)}]`);
  lines.push('  start_ --> s0');
  const limitText = (t: CompiledTarget): string => (t.edgeLimit === Infinity ? '' : ` (max ${t.edgeLimit})`);
  for (const s of p.stages) {
    const from = `s${s.index}`;
    for (const r of s.rules)
      lines.push(`  ${from} -->|${label(ruleLabel(r.condition, r.value) + limitText(r.target))}| ${id(r.target)}`);
    const d = s.defaultTarget;
    const defaultText = (s.rules.length > 0 ? 'default' : '') + limitText(d);
    lines.push(defaultText === '' ? `  ${from} --> ${id(d)}` : `  ${from} -->|${label(defaultText.trim())}| ${id(d)}`);
    if (s.errorTarget !== undefined)
      lines.push(`  ${from} -.->|${label(`error${limitText(s.errorTarget)}`)}| ${id(s.errorTarget)}`);
  }
  for (const s of p.stages) {
    // validated: every dependency names a stage
    for (const dep of s.config.requires ?? [])
      lines.push(`  s${(p.byName.get(dep) as CompiledStage).index} ==>|requires| s${s.index}`);
    for (const dep of s.config.after ?? [])
      lines.push(`  s${(p.byName.get(dep) as CompiledStage).index} -.->|after| s${s.index}`);
  }
  if (used.has('end')) lines.push('  end_([end])');
  if (used.has('clarification')) lines.push('  clarification_{{clarification}}');
  if (used.has('confirmation')) lines.push('  confirmation_{{confirmation}}');
  return lines.join('\n');
}
