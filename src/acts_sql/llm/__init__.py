"""LLM layer: one protocol, backends, usage accounting, structured (JSON) calls.

Backends: ``openai`` (any OpenAI-compatible endpoint), ``local`` (a GGUF
model in process with llama-cpp-python; the embedded models are assembled
from PyPI part packages by :mod:`acts_sql.llm.models`), ``scripted``; and
:class:`CachedBackend`, a record/replay cache around any of them. Importing
this package does not import llama-cpp-python.
"""

from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, Message, Usage
from acts_sql.llm.cache import CachedBackend, ReplayedUsage, request_key
from acts_sql.llm.jsonrepair import (
    JsonExtraction,
    JsonExtractionError,
    extract_json,
    parse_json_object,
)
from acts_sql.llm.local import LocalBackend, llama_cpp_available, unload_models
from acts_sql.llm.models import (
    DEFAULT_LOCAL_MODEL,
    MODELS,
    ModelError,
    ModelIntegrityError,
    ensure_model,
)
from acts_sql.llm.openai_backend import JsonMode, OpenAIBackend
from acts_sql.llm.prompting import PromptTemplate, PromptTemplateError, load_template, render
from acts_sql.llm.scripted import ScriptedBackend, estimate_tokens
from acts_sql.llm.spec import DEFAULT_MODEL, SPEC_FORMS, parse_llm_spec
from acts_sql.llm.structured import (
    StructuredReply,
    ask_json,
    describe_validation_error,
    reask_message,
)

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "DEFAULT_MODEL",
    "MODELS",
    "SPEC_FORMS",
    "CachedBackend",
    "JsonExtraction",
    "JsonExtractionError",
    "JsonMode",
    "LLMBackend",
    "LLMRequest",
    "LLMResponse",
    "LocalBackend",
    "Message",
    "ModelError",
    "ModelIntegrityError",
    "OpenAIBackend",
    "PromptTemplate",
    "PromptTemplateError",
    "ReplayedUsage",
    "ScriptedBackend",
    "StructuredReply",
    "Usage",
    "ask_json",
    "describe_validation_error",
    "ensure_model",
    "estimate_tokens",
    "extract_json",
    "llama_cpp_available",
    "load_template",
    "parse_json_object",
    "parse_llm_spec",
    "reask_message",
    "render",
    "request_key",
    "unload_models",
]
