#pragma once
// The OpenAPI 3 description of the HTTP API (docs/openapi.json), compiled in and served at
// GET /openapi.json, so clients and checkers (schemathesis) read the contract of the running
// build.
#include <string_view>

namespace ttlpred::serve {

std::string_view openapi_document();

}  // namespace ttlpred::serve
