"""docs/openapi.json is the service's current OpenAPI document."""

from __future__ import annotations

import json
from pathlib import Path

from acts_sql.server import openapi_document

DOC = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def test_the_checked_in_openapi_document_is_current():
    current = openapi_document()
    assert DOC.exists(), "write it: acts-sql serve --openapi > docs/openapi.json"
    assert json.loads(DOC.read_text()) == current, (
        "docs/openapi.json is stale: acts-sql serve --openapi > docs/openapi.json"
    )


def test_the_document_describes_the_api():
    doc = openapi_document()
    paths = doc["paths"]
    for path in ("/v1/correct", "/v1/generate", "/v1/runs/{run_id}", "/v1/runs/{run_id}/events"):
        assert path in paths
    assert "HTTPBearer" in doc["components"]["securitySchemes"]
    correct = paths["/v1/correct"]["post"]
    assert correct["security"] == [{"HTTPBearer": []}]
    assert {"400", "401", "413", "422", "429"} <= set(correct["responses"])
    request = doc["components"]["schemas"]["CorrectRequest"]
    assert request["additionalProperties"] is False
    assert "url" not in request["properties"]
