"""Collab as a Model Context Protocol server: tools.py (what a client may do, as its token's
person), server.py (the SDK's MCPServer over those tools), http.py (``/mcp`` under Daphne)."""
