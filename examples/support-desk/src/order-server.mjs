// The desk's order-lookup MCP server: a separate program speaking the Model Context Protocol
// over stdio, written with the official SDK (its McpServer). The billing agent reads orders
// through it (config/desk-crew.yaml: `mcp: [{ server: orders, … }]`); any MCP client can.
// Plain JavaScript, so it starts with `node src/order-server.mjs`, no build.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod';

const ORDERS = {
  5531: { order: '5531', item: 'Espresso machine', total: 420, status: 'delivered broken' },
  4410: { order: '4410', item: 'Milk frother', total: 42, status: 'shipped' },
};

const server = new McpServer({ name: 'order-lookup', version: '1.0.0' });
server.registerTool(
  'get_order',
  {
    description: 'Look an order up by its number: the item, the total in dollars and its status.',
    inputSchema: { order: z.string().describe('The order number, e.g. "5531"') },
    outputSchema: { order: z.string(), item: z.string(), total: z.number(), status: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ order }) => {
    const found = ORDERS[order];
    if (found === undefined) return { content: [{ type: 'text', text: `No order ${order}` }], isError: true };
    return { content: [{ type: 'text', text: JSON.stringify(found) }], structuredContent: found };
  },
);
await server.connect(new StdioServerTransport());
