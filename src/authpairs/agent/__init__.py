"""Agent mode: the benchmark's cases served to an agent over MCP (``authpairs mcp serve``).

The effect types are MCP tools; a case's public material (request, policy, evidence documents)
is an MCP resource and prompt; every tool call the agent makes is reviewed by the configured
reviewer in the case's context, enforced in the sandbox and recorded.
"""
