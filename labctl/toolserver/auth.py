"""The HTTP transport's bearer token check (an ASGI wrapper around the MCP app).

Every HTTP request must carry `Authorization: Bearer <[mcp] token>`, compared in
constant time; anything else is answered 401 before the MCP app sees it. The token is
never logged (uvicorn's access log is off and nothing here prints headers).
"""

from __future__ import annotations

import hmac
import json
from typing import Any


class BearerAuth:
    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            body = json.dumps({"error": "unauthorized", "message": "bearer token required"})
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="labctl"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Any) -> bool:
        given = b""
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                given = value
        return hmac.compare_digest(given, self.expected)
