/**
 * `@signalyard/mcp`: Model Context Protocol servers' tools as ordinary Signalyard tools
 * (`connectMcp`: one connection per server shared by every agent, per-agent views, tool-list
 * caching, reconnects, approvals from annotations), and Signalyard agents served as MCP tools
 * (`serveMcp`). Built on `@modelcontextprotocol/sdk`.
 *
 * @packageDocumentation
 */
export { connectMcp } from './connect-mcp.js';
export type { McpClient } from './connect-mcp.js';
export { McpError } from './errors/mcp-error.js';
export type { McpErrorCode } from './errors/mcp-error.js';
export type {
  ConnectMcpOptions,
  McpDefaultApproval,
  McpHttpServer,
  McpReconnectOptions,
  McpServerConfig,
  McpStdioServer,
} from './mcp-options.js';
export { IDEMPOTENCY_META_KEY } from './mcp-tool.js';
export type { McpTool, McpToolOrigin } from './mcp-tool.js';
export type { McpEvent, McpServerState } from './server-connection.js';
export { serveMcp } from './serve-mcp.js';
export type { McpServableRunner, McpTurnAnswer, McpTurnStream, ServedMcp } from './serve-mcp.js';
export type { ServeMcpOptions } from './serve-options.js';
