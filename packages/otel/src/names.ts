/** The span, span-event and attribute names the plugin records (internal: listed in the README and docs/observability.md). */

export const SPAN_SIGNAL = 'signalyard.signal';
export const SPAN_TURN = 'signalyard.turn';
export const SPAN_TRANSITION = 'signalyard.transition';
export const SPAN_CREW_AGENT = 'signalyard.crew.agent';
export const SPAN_PIPELINE_STAGE = 'signalyard.pipeline.stage';

export const ATTR_SESSION_KEY = 'signalyard.session_key';
export const ATTR_AGENT_ID = 'signalyard.agent_id';
export const ATTR_SIGNAL_KIND = 'signalyard.signal_kind';
export const ATTR_ACTION = 'signalyard.action';
export const ATTR_TIER = 'signalyard.tier';
export const ATTR_ROUTE = 'signalyard.route';
export const ATTR_STATUS = 'signalyard.status';
export const ATTR_ERROR_CODE = 'signalyard.error_code';
export const ATTR_CONTENT = 'signalyard.content';

export const ATTR_TRANSITION_FROM = 'signalyard.transition.from';
export const ATTR_TRANSITION_ACTION = 'signalyard.transition.action';
export const ATTR_TRANSITION_TO = 'signalyard.transition.to';
export const ATTR_TRANSITION_GUARD = 'signalyard.transition.guard';

export const ATTR_CREW_AGENT_ID = 'signalyard.crew.agent_id';
export const ATTR_CREW_GROUP = 'signalyard.crew.group';
export const ATTR_CREW_MEMBER_STATUS = 'signalyard.crew.member_status';
export const ATTR_CREW_FROM = 'signalyard.crew.from';
export const ATTR_CREW_TO = 'signalyard.crew.to';
export const ATTR_CREW_VIA = 'signalyard.crew.via';
export const ATTR_CREW_SIGNAL = 'signalyard.crew.signal';
export const ATTR_CREW_HANDOFFS = 'signalyard.crew.handoffs';
export const ATTR_CREW_REASON = 'signalyard.crew.reason';
export const ATTR_CREW_AGENTS = 'signalyard.crew.agents';
export const ATTR_CREW_SUCCEEDED = 'signalyard.crew.succeeded';
export const ATTR_CREW_TOOL = 'signalyard.crew.tool';
export const ATTR_CREW_TOOLS = 'signalyard.crew.tools';
export const ATTR_CREW_TOOL_CALL_ID = 'signalyard.crew.tool_call_id';
export const ATTR_CREW_TOOL_ERROR = 'signalyard.crew.tool_error';
/** The MCP server of a tool call to an MCP tool (`Tool.mcp.server`). */
export const ATTR_MCP_SERVER = 'mcp.server';
/** The tool's name on its MCP server (`Tool.mcp.tool`). */
export const ATTR_MCP_TOOL = 'mcp.tool';

export const ATTR_PIPELINE_STAGE = 'signalyard.pipeline.stage';
export const ATTR_PIPELINE_NEXT = 'signalyard.pipeline.next';
export const ATTR_PIPELINE_FAILED = 'signalyard.pipeline.failed';
export const ATTR_PIPELINE_INTERRUPT_KIND = 'signalyard.pipeline.interrupt_kind';

export const EVENT_CREW_HANDOFF = 'signalyard.crew.handoff';
export const EVENT_CREW_TOOL_CALLS = 'signalyard.crew.tool_calls';
export const EVENT_CREW_TOOL_START = 'signalyard.crew.tool_start';
export const EVENT_CREW_TOOL_RESULT = 'signalyard.crew.tool_result';
export const EVENT_CREW_TERMINATE = 'signalyard.crew.terminate';
export const EVENT_CREW_PAUSE = 'signalyard.crew.pause';
export const EVENT_CREW_PARALLEL_START = 'signalyard.crew.parallel_start';
export const EVENT_CREW_PARALLEL_END = 'signalyard.crew.parallel_end';
export const EVENT_PIPELINE_INTERRUPT = 'signalyard.pipeline.interrupt';
