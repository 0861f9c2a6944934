"""LLM layer: one protocol, backends, usage accounting, structured (JSON) calls."""

from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, Message, Usage
from acts_sql.llm.jsonrepair import (
    JsonExtraction,
    JsonExtractionError,
    extract_json,
    parse_json_object,
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
    "DEFAULT_MODEL",
    "SPEC_FORMS",
    "JsonExtraction",
    "JsonExtractionError",
    "JsonMode",
    "LLMBackend",
    "LLMRequest",
    "LLMResponse",
    "Message",
    "OpenAIBackend",
    "PromptTemplate",
    "PromptTemplateError",
    "ScriptedBackend",
    "StructuredReply",
    "Usage",
    "ask_json",
    "describe_validation_error",
    "estimate_tokens",
    "extract_json",
    "load_template",
    "parse_json_object",
    "parse_llm_spec",
    "reask_message",
    "render",
]
