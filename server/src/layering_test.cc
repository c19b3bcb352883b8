// The server's folders are layers: each includes only the folders docs/architecture.md says it
// depends on, and those dependencies form no cycle. The table in the document is read here, so
// the document and the code cannot disagree (a new include across folders means a changed row).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace ais {
namespace {

namespace fs = std::filesystem;
using Graph = std::map<std::string, std::set<std::string>>;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What each folder of server/src includes from the others (tests and test helpers left out:
// they may reach across to build what they check).
Graph Includes() {
  Graph g;
  const fs::path root(AIS_SOURCE_DIR);
  const std::regex include(R"re(#include "([a-z0-9_]+)/)re");
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.ends_with("_test.cc") || name.ends_with("test_util.h")) continue;
    if (!name.ends_with(".cc") && !name.ends_with(".h")) continue;
    const fs::path rel = fs::relative(e.path(), root);
    if (rel.begin() == rel.end() || std::next(rel.begin()) == rel.end()) continue;  // main.cc: wires everything
    const std::string folder = rel.begin()->string();
    const std::string text = ReadAll(e.path());
    g[folder];
    for (auto it = std::sregex_iterator(text.begin(), text.end(), include); it != std::sregex_iterator(); ++it) {
      if ((*it)[1] != folder) g[folder].insert((*it)[1]);
    }
  }
  return g;
}

// docs/architecture.md's server table: "| `folder/` | concern | dep, dep |" ("—": none).
Graph Documented() {
  Graph g;
  const std::string doc = ReadAll(fs::path(AIS_SOURCE_DIR) / ".." / ".." / "docs" / "architecture.md");
  const std::regex row(R"re(\n\| `([a-z0-9_]+)/` \|[^\n]*\| ([^|\n]*) \|)re");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator(); ++it) {
    std::set<std::string>& deps = g[(*it)[1]];
    const std::string list = (*it)[2];
    const std::regex word("[a-z0-9_]+");
    for (auto w = std::sregex_iterator(list.begin(), list.end(), word); w != std::sregex_iterator(); ++w) {
      deps.insert(w->str());
    }
  }
  return g;
}

TEST(Layering, EveryFolderIncludesWhatTheArchitectureDocumentSays) {
  const Graph code = Includes(), doc = Documented();
  ASSERT_GT(code.size(), 10u) << "the scan found too little: has the tree moved?";
  for (const auto& [folder, deps] : code) {
    auto it = doc.find(folder);
    ASSERT_NE(it, doc.end()) << "server/src/" << folder << "/ has no row in docs/architecture.md";
    for (const auto& d : deps) {
      EXPECT_TRUE(it->second.count(d)) << folder << "/ includes " << d << "/, which its row does not list";
    }
    for (const auto& d : it->second) {
      EXPECT_TRUE(deps.count(d)) << folder << "/'s row lists " << d << "/, which it does not include";
    }
  }
  for (const auto& [folder, deps] : doc) {
    EXPECT_TRUE(code.count(folder)) << "docs/architecture.md has a row for " << folder << "/, which does not exist";
  }
}

TEST(Layering, NoFolderCycle) {
  const Graph g = Includes();
  std::map<std::string, int> state;  // 1: on the current path, 2: done
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& f) {
    state[f] = 1;
    path.push_back(f);
    auto it = g.find(f);
    if (it != g.end()) {
      for (const auto& d : it->second) {
        if (state[d] == 1) {
          std::string cycle;
          for (const auto& p : path) cycle += p + " -> ";
          ADD_FAILURE() << "a folder cycle: " << cycle << d;
        } else if (state[d] == 0) {
          visit(d);
        }
      }
    }
    path.pop_back();
    state[f] = 2;
  };
  for (const auto& [f, _] : g) {
    if (state[f] == 0) visit(f);
  }
}

}  // namespace
}  // namespace ais
