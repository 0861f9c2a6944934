"""HTTP overhead per call of an OpenAI-compatible server that reports its own time.

Sends one chat request 6 times with httpx and prints, per call, the client's time, the
server's ``openai-processing-ms`` header (llama-cpp-python's server: time in its route
handler) and their difference; then the same request 5 times through ``OpenAIBackend``
(``usage.seconds``, what the trace records). docs/LLM_SERVERS.md has a run's numbers.

    python scripts/llm_server_overhead.py http://127.0.0.1:8000/v1 q05
"""

from __future__ import annotations

import statistics
import sys
import time

import httpx

from acts_sql.llm.base import LLMRequest, Message
from acts_sql.llm.openai_backend import OpenAIBackend

QUESTION = "Fix this SQLite query so it returns the names of the users older than 30. " * 8
CONTENT = QUESTION + "SQL: SELECT name FROM user WHERE age > 30"


def main(url: str, model: str) -> None:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": CONTENT}],
        "max_tokens": 16,
        "temperature": 0.0,
    }
    rows = []
    with httpx.Client(timeout=300) as client:
        for _ in range(6):
            started = time.perf_counter()
            reply = client.post(f"{url}/chat/completions", json=body)
            total = time.perf_counter() - started
            rows.append((total, float(reply.headers["openai-processing-ms"]) / 1000))
    for total, server in rows:
        print(
            f"client {total * 1000:8.1f} ms  server {server * 1000:8.1f} ms  "
            f"overhead {(total - server) * 1000:5.1f} ms"
        )
    warm = [total - server for total, server in rows[1:]]
    print(f"overhead, calls 2-6: median {statistics.median(warm) * 1000:.1f} ms")
    request = LLMRequest(
        purpose="correct", messages=[Message(role="user", content=CONTENT)], max_tokens=16
    )
    with OpenAIBackend(model, base_url=url, api_key="none") as backend:
        through = [backend.complete(request).usage.seconds for _ in range(5)]
    gap = statistics.median(through) - statistics.median(server for _, server in rows[1:])
    print(
        f"OpenAIBackend usage.seconds: {[round(s * 1000, 1) for s in through]} ms; "
        f"median minus the server's median: {gap * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main(sys.argv[1].rstrip("/"), sys.argv[2])
