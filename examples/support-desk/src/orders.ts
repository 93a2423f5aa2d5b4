import { fileURLToPath } from 'node:url';
import { connectMcp, type McpClient } from '@signalyard/mcp';

/**
 * Connects to the desk's order-lookup MCP server (src/order-server.mjs, started as a child
 * process and spoken to over stdio). The billing agent's crew.yaml view
 * (`mcp: [{ server: orders, allow: [get_order], prefix: orders_ }]`) resolves through it; one
 * connection serves every runner of the process. Close it when done (the child ends).
 */
export async function connectOrders(): Promise<McpClient> {
  const server = fileURLToPath(new URL('./order-server.mjs', import.meta.url));
  return await connectMcp({ servers: { orders: { command: process.execPath, args: [server] } } });
}
