"""Record/replay cache: identical LLM requests are answered from disk.

:class:`CachedBackend` wraps any backend. The key of a request is the sha256
of a canonical JSON (sorted keys, no whitespace) of the inner backend's name
(which names the model), the purpose, the messages, the JSON schema, the
temperature and max_tokens (and the seed, the values to avoid and, for a local
backend, ``sql_names`` and ``enough_blocks``). Not the call's ``timeout_s``
(the time left of a run, which says nothing of the reply): a replayed call hits
however much time is left. A hit returns the recorded text at no cost: its usage has the
recorded token counts, ``seconds`` 0 and ``replayed`` True
(:class:`ReplayedUsage`). A miss asks the inner backend and records the
reply. A benchmark re-run with the same cache directory costs nothing.

Entries are files ``DIR/<key[:2]>/<key>.json`` written atomically (a temp
file in the same directory, then a rename), so concurrent workers and
interrupted runs never leave a half-written entry under its final name. An
entry that cannot be read, is not valid JSON, or does not hold the same
request is a miss, and is overwritten by the fresh reply. Failed calls are
not recorded, nor are replies cut short by their deadline (``stopped_by``
``deadline``): with more time the model would have written more.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from acts_sql.errors import LLMSpecError
from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, Usage

__all__ = ["CacheStats", "CachedBackend", "ReplayedUsage", "request_key"]

_FORMAT = 1


class ReplayedUsage(Usage):
    """Usage of a reply served from the cache: recorded tokens, 0 seconds."""

    replayed: bool = True


@dataclass
class CacheStats:
    """Counters of one CachedBackend: hits, misses, corrupt entries rewritten,
    replies that could not be recorded (disk full, read-only)."""

    hits: int = 0
    misses: int = 0
    repaired: int = 0
    unwritten: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def _canonical_request(backend_name: str, request: LLMRequest) -> dict[str, Any]:
    """What the key covers: what the request asks for (never ``timeout_s``)."""
    return {
        "backend": backend_name,
        "purpose": request.purpose,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "json_schema": request.json_schema,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        **({"seed": request.seed} if request.seed is not None else {}),
        **({"avoid": request.avoid.model_dump()} if request.avoid and request.avoid.values else {}),
        **_constraint_key(backend_name, request),
    }


def _constraint_key(backend_name: str, request: LLMRequest) -> dict[str, Any]:
    """The request's ``sql_names`` and ``enough_blocks``, for a local backend only (the
    others ignore them, and their recorded replies stay valid)."""
    if not backend_name.startswith("local:"):
        return {}
    key: dict[str, Any] = {}
    if request.sql_names is not None:
        key["sql_names"] = request.sql_names.model_dump()
    if request.enough_blocks is not None:
        key["enough_blocks"] = request.enough_blocks
    return key


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(backend_name: str, request: LLMRequest) -> str:
    """The cache key of `request` sent to the backend named `backend_name`."""
    text = _canonical_json(_canonical_request(backend_name, request))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedBackend:
    """An LLMBackend that answers repeated requests from a directory on disk."""

    def __init__(self, inner: LLMBackend, directory: str | Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.directory = Path(directory).expanduser()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LLMSpecError(
                f"LLM cache directory {self.directory}: cannot be created ({exc})",
                path=str(self.directory),
            ) from None
        if not self.directory.is_dir():
            raise LLMSpecError(
                f"LLM cache directory {self.directory}: not a directory", path=str(self.directory)
            )
        self.stats = CacheStats()
        self._lock = threading.Lock()

    def entry_path(self, request: LLMRequest) -> Path:
        """Where the reply to `request` is (or would be) recorded."""
        key = request_key(self.inner.name, request)
        return self.directory / key[:2] / f"{key}.json"

    def complete(self, request: LLMRequest) -> LLMResponse:
        canonical = _canonical_request(self.inner.name, request)
        path = self.entry_path(request)
        recorded = _read_entry(path, canonical)
        if recorded is not None:
            with self._lock:
                self.stats.hits += 1
            return recorded
        existed = path.exists()
        response = self.inner.complete(request)
        if response.usage.stopped_by == "deadline":  # a partial reply: not the model's answer
            with self._lock:
                self.stats.misses += 1
            return response
        try:
            _write_entry(path, canonical, response)
        except OSError:
            written = False  # a full or read-only disk costs the recording, not the reply
        else:
            written = True
        with self._lock:
            self.stats.misses += 1
            self.stats.repaired += int(existed and written)
            self.stats.unwritten += int(not written)
        return response


def _read_entry(path: Path, canonical: dict[str, Any]) -> LLMResponse | None:
    """The recorded response, or None for a missing, unreadable or foreign entry."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return None
    if data.get("request") != canonical:  # a collision or a tampered entry
        return None
    response = data.get("response")
    if not isinstance(response, dict) or not isinstance(response.get("text"), str):
        return None
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return None
    stopped_by = usage.get("stopped_by")
    try:
        replayed = ReplayedUsage(
            purpose=canonical["purpose"],
            prompt_tokens=usage.get("prompt_tokens", 0),
            cached_prompt_tokens=usage.get("cached_prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            seconds=0.0,
            stopped_by=stopped_by if isinstance(stopped_by, str) else None,
        )
    except ValueError:
        return None
    return LLMResponse(text=response["text"], usage=replayed)


def _write_entry(path: Path, canonical: dict[str, Any], response: LLMResponse) -> None:
    usage = response.usage
    entry = {
        "format": _FORMAT,
        "request": canonical,
        "response": {
            "text": response.text,
            "usage": {
                "prompt_tokens": usage.prompt_tokens,
                "cached_prompt_tokens": usage.cached_prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "seconds": usage.seconds,
                "stopped_by": usage.stopped_by,
            },
        },
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(entry, ensure_ascii=False, indent=1) + "\n")
        os.replace(temp_name, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
