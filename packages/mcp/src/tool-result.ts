import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpError } from './errors/mcp-error.js';

type Content = CallToolResult['content'][number];

/**
 * What the model reads for an MCP tool's result: `structuredContent` when present (a JSON
 * value), else the text content joined by newlines, images, audio and resources as a short
 * placeholder with their MIME type and URI. Longer than `maxChars` → cut, with a marker saying
 * how much was left out. `isError: true` → an `McpError` (`MCP_TOOL_FAILED`) whose message is
 * that text, which the engine answers to the model as a tool error.
 * @internal
 */
export function toolResultValue(
  result: CallToolResult,
  ctx: { server: string; tool: string; maxChars: number },
): unknown {
  const structured: unknown = result.structuredContent;
  const content = Array.isArray(result.content) ? result.content : [];
  if (result.isError === true) {
    const text = cut(content.map(contentText).join('\n'), ctx.maxChars);
    throw new McpError({
      code: 'MCP_TOOL_FAILED',
      message: text === '' ? `MCP tool ${JSON.stringify(ctx.tool)} failed (no message)` : text,
      server: ctx.server,
      tool: ctx.tool,
    });
  }
  if (structured !== undefined && structured !== null) {
    const json = JSON.stringify(structured);
    return json.length > ctx.maxChars ? cut(json, ctx.maxChars) : structured;
  }
  return cut(content.map(contentText).join('\n'), ctx.maxChars);
}

/** One content block as text: text as it is, anything else as a placeholder. */
function contentText(block: Content): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image ${block.mimeType}]`;
    case 'audio':
      return `[audio ${block.mimeType}]`;
    case 'resource': {
      const r = block.resource;
      return `[resource ${r.uri}${r.mimeType === undefined ? '' : ` (${r.mimeType})`}]`;
    }
    case 'resource_link':
      return `[resource link ${block.uri}${block.mimeType === undefined ? '' : ` (${block.mimeType})`}]`;
    default:
      return `[${String((block as { type?: unknown }).type)} content]`;
  }
}

function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n[… cut: ${text.length - maxChars} of ${text.length} characters left out (maxResultChars ${maxChars})]`;
}
