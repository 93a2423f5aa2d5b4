// The agent's diagrams (FSM with the current state highlighted, crew, pipeline), drawn to SVG by
// the Mermaid bundle the package ships, loaded on the first diagram.
import { el } from './dom.js';

/** The diagrams section, with a placeholder per diagram for {@link renderDiagrams}. */
export function diagramsSection(diagrams) {
  const kinds = ['fsm', 'crew', 'pipeline'].filter((k) => typeof diagrams[k] === 'string');
  if (kinds.length === 0) return el('section', { id: 'diagrams', hidden: true });
  return el(
    'section',
    { id: 'diagrams' },
    el('h2', {}, 'Diagrams'),
    ...kinds.map((k) =>
      el(
        'div',
        {},
        el('h3', {}, k === 'fsm' ? 'FSM (current state highlighted)' : k),
        el('div', { className: 'diagram', 'data-diagram': k, 'data-source': diagrams[k] }, 'drawing…'),
      ),
    ),
  );
}

let mermaidLoading;
function loadMermaid() {
  mermaidLoading ??= new Promise((resolve, reject) => {
    const script = el('script', { src: '/assets/mermaid.min.js' });
    script.addEventListener('load', () => {
      window.mermaid.initialize({
        startOnLoad: false,
        securityLevel: 'strict',
        htmlLabels: false,
        flowchart: { htmlLabels: false },
      });
      resolve(window.mermaid);
    });
    script.addEventListener('error', () => reject(new Error('the diagram library could not be loaded')));
    document.head.append(script);
  });
  return mermaidLoading;
}

let diagramId = 0;

/** Draws every diagram placeholder under `root`. */
export async function renderDiagrams(root) {
  const boxes = [...root.querySelectorAll('[data-diagram]')];
  if (boxes.length === 0) return;
  let mermaid;
  try {
    mermaid = await loadMermaid();
  } catch (e) {
    for (const box of boxes) box.textContent = String(e.message);
    return;
  }
  for (const box of boxes) {
    try {
      const { svg } = await mermaid.render(`diagram-${++diagramId}`, box.getAttribute('data-source'));
      // Parsed as XML and imported, with anything active removed: never innerHTML.
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      for (const bad of doc.querySelectorAll('script, foreignObject iframe')) bad.remove();
      for (const node of doc.querySelectorAll('*')) {
        for (const attr of [...node.attributes]) if (/^on/i.test(attr.name)) node.removeAttribute(attr.name);
      }
      box.replaceChildren(document.importNode(doc.documentElement, true));
    } catch (e) {
      box.replaceChildren(el('span', {}, `This diagram could not be drawn: ${String(e.message ?? e)}`));
    }
  }
}
