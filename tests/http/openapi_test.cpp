// The OpenAPI description the daemon serves (docs/openapi.yaml, compiled in) against the
// router's resource table: every route and method in both, nothing in one only. A simple
// scan of the YAML: paths are the 2-space keys under `paths:`, methods the 4-space keys.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "http/openapi.hpp"
#include "http/resources.hpp"

namespace {

using routes_map = std::map<std::string, std::set<std::string>>;

/// `/nodes/{noderange}/attrs/{attrs}` -> `/nodes/{}/attrs/{}`: names of variables differ.
std::string shape(const std::string& path) {
  std::string out;
  bool in_var = false;
  for (char c : path) {
    if (c == '{') {
      in_var = true;
      out += "{}";
    } else if (c == '}') {
      in_var = false;
    } else if (!in_var) {
      out += c;
    }
  }
  return out;
}

routes_map described() {
  routes_map out;
  std::istringstream in{std::string{cws::http::openapi_text()}};
  std::string line;
  std::string path;
  bool in_paths = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') {
      in_paths = line == "paths:";
      continue;
    }
    if (!in_paths) {
      continue;
    }
    if (line.rfind("  /", 0) == 0) {
      path = shape(line.substr(2, line.rfind(':') - 2));
      out[path];
      continue;
    }
    for (const char* m : {"get", "put", "post", "delete", "patch", "head", "options"}) {
      if (line == std::string{"    "} + m + ":") {
        std::string upper = m;
        for (auto& c : upper) {
          c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
        out[path].insert(upper);
      }
    }
  }
  return out;
}

routes_map routed() {
  routes_map out{{"/", {"GET"}}}; // the base path itself: the resource list
  for (const auto& r : cws::http::routes()) {
    std::istringstream methods{std::string{r.methods}};
    std::string m;
    while (methods >> m) {
      out[shape(r.path)].insert(m);
    }
  }
  return out;
}

TEST(openapi, describes_every_route_the_router_knows_and_no_other) {
  auto doc = described();
  auto table = routed();
  ASSERT_GT(doc.size(), 20u) << "the scan found too little; did the layout change?";
  for (const auto& [path, methods] : table) {
    ASSERT_EQ(doc.count(path), 1u) << path << " is routed but not described";
    EXPECT_EQ(doc[path], methods) << path << ": described methods differ from the router's";
  }
  for (const auto& [path, methods] : doc) {
    EXPECT_EQ(table.count(path), 1u) << path << " is described but not routed";
  }
}

TEST(openapi, every_operation_has_an_id_and_a_tag) {
  std::string text{cws::http::openapi_text()};
  size_t operations = 0;
  for (const auto& [path, methods] : described()) {
    operations += methods.size();
  }
  auto count = [&](const std::string& key) {
    size_t n = 0;
    for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("\n      operationId: "), operations);
  EXPECT_EQ(count("\n      tags: ["), operations);
}

TEST(openapi, nodeshell_parameters_and_stream_are_described) {
  std::string text{cws::http::openapi_text()};
  for (const char* p : {"fanout", "timeout", "format", "stream"}) {
    EXPECT_NE(text.find("- {$ref: '#/components/parameters/" + std::string{p} + "'}"),
              std::string::npos)
      << p;
  }
  EXPECT_NE(text.find("application/x-ndjson:"), std::string::npos);
  EXPECT_NE(text.find("errorcode:\n          type: integer\n          enum: [3]"),
            std::string::npos);
}

} // namespace
