#include "server_flags.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ais {
namespace {

// argv as main gets it: the program name, then `args`.
Result<Command> Parse(std::vector<std::string> args, ServerOptions* opts) {
  args.insert(args.begin(), "aistore-server");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return ParseFlags(static_cast<int>(args.size()), argv.data(), opts);
}

Result<Command> Parse(std::vector<std::string> args) {
  ServerOptions opts;
  return Parse(std::move(args), &opts);
}

// An argument each flag takes and one it refuses; a switch (no argument) is refused a value.
struct Sample {
  std::string good, bad;
};
const std::map<std::string, Sample> kSamples = {
    {"mountpath", {"/data/disk2", "data/disk2"}},
    {"port", {"0", "65536"}},
    {"host", {"127.0.0.1", ""}},
    {"threads", {"256", "0"}},
    {"getbatch-max-soft-errs", {"0", "-1"}},
    {"promote-root", {"/srv/promote/", "srv/promote"}},
    {"etl", {"off", "yes"}},
    {"etl-python", {"/usr/bin/python3.11", ""}},
    {"allow-s3-endpoint", {"http://127.0.0.1:9000", "ftp://127.0.0.1"}},
    {"download-allow-loopback", {"", "yes"}},
    {"no-aws-backend", {"", "yes"}},
    {"fsync", {"", "1"}},
    {"s3-api-via-root", {"", "on"}},
    {"s3-credentials", {"/etc/aws/credentials", ""}},
    {"tls-cert", {"server.crt", ""}},
    {"tls-key", {"server.key", ""}},
    {"tls-client-ca", {"ca.crt", ""}},
    {"auth-required", {"", "true"}},
    {"auth-oidc-issuer", {"https://issuer.example", ""}},
    {"auth-oidc-ca", {"ca.pem", ""}},
    {"auth-audience", {"aistore", ""}},
    {"max-connections", {"16777216", "16777217"}},
    {"max-connections-per-address", {"1", "0"}},
    {"idle-timeout", {"86400", "86401"}},
    {"header-timeout", {"1", "3601"}},
    {"max-header-size", {"1KiB", "lots"}},
    {"max-json-body", {"4GiB", "1023"}},
    {"max-json-depth", {"2", "1"}},
    {"getbatch-max-items", {"4294967296", "4294967297"}},
    {"list-max-page-size", {"1", "1e3"}},
    {"header-snapshot-interval", {"0", "86400001"}},
    {"job-idle-timeout", {"86400000", "0"}},
    {"lru-min-dont-evict", {"1000", "999"}},
    {"access-log", {"-", ""}},
    {"log-level", {"warning", "verbose"}},
    {"no-metrics", {"", "x"}},
    {"print-openapi", {"", "yaml"}},
    {"print-flags-markdown", {"", "x"}},
    {"help", {"", "all"}},
    {"version", {"", "x"}},
};

TEST(ServerFlags, EveryFlagTakesAGoodValueAndRefusesABadOneWithOneErrorShape) {
  std::set<std::string> rows;
  for (const Flag& f : ServerFlags()) {
    rows.insert(f.name);
    auto it = kSamples.find(f.name);
    ASSERT_NE(it, kSamples.end()) << "--" << f.name << " has no sample here: add one";
    const std::string flag = std::string("--") + f.name;
    // What a server needs besides (the TLS pair: for --tls-client-ca).
    const std::vector<std::string> mp = {"--mountpath", "/data/disk1", "--tls-cert", "c.pem", "--tls-key", "k.pem"};

    std::vector<std::string> good = mp;
    good.push_back(flag);
    if (f.arg) good.push_back(it->second.good);
    EXPECT_TRUE(Parse(good).ok()) << flag << " " << it->second.good << ": " << Parse(good).status().message();

    const std::string bad_value = it->second.bad.empty() ? "\"\"" : it->second.bad;
    std::vector<std::string> bad = mp;
    if (f.arg) {
      bad.insert(bad.end(), {flag, it->second.bad});
    } else {
      bad.push_back(flag + "=" + it->second.bad);
    }
    auto refused = Parse(bad);
    ASSERT_FALSE(refused.ok()) << flag << " took " << it->second.bad;
    const std::string expects = f.arg ? f.setter.expects : "no value";
    EXPECT_FALSE(expects.empty()) << flag;
    EXPECT_EQ(refused.status().message(), "invalid " + flag + " " + bad_value + " (expecting " + expects + ")");
  }
  for (const auto& [name, _] : kSamples) EXPECT_TRUE(rows.count(name)) << "no row --" << name;
}

TEST(ServerFlags, RangesAreTodays) {
  // The error names the range: a few, spelled out, so that a changed bound is seen here.
  EXPECT_EQ(Parse({"--port", "70000"}).status().message(), "invalid --port 70000 (expecting 0..65535)");
  EXPECT_EQ(Parse({"--threads", "0"}).status().message(), "invalid --threads 0 (expecting 1..256)");
  EXPECT_EQ(Parse({"--max-header-size", "lots"}).status().message(),
            "invalid --max-header-size lots (expecting 1KiB..1GiB)");
  EXPECT_EQ(Parse({"--max-json-depth", "1"}).status().message(), "invalid --max-json-depth 1 (expecting 2..10000)");
  EXPECT_EQ(Parse({"--log-level", "verbose"}).status().message(),
            "invalid --log-level verbose (expecting info, warning or error)");
}

TEST(ServerFlags, EachRowSetsItsOption) {
  ServerOptions o;
  auto cmd = Parse({"--mountpath", "/a", "--mountpath", "/b/", "--port", "0", "--threads", "3", "--fsync",
                    "--promote-root", "/srv/p//", "--max-header-size", "128KiB", "--max-json-body", "1MiB",
                    "--idle-timeout", "5", "--header-timeout", "7", "--job-idle-timeout", "250",
                    "--allow-s3-endpoint", "minio:9000", "--no-aws-backend", "--no-metrics", "--log-level",
                    "error", "--auth-audience", "a", "--auth-audience", "b", "--getbatch-max-soft-errs", "4294967295"},
                   &o);
  ASSERT_TRUE(cmd.ok()) << cmd.status().message();
  EXPECT_EQ(*cmd, Command::kServe);
  EXPECT_EQ(o.store.mountpaths, (std::vector<std::string>{"/a", "/b/"}));
  EXPECT_EQ(o.http.port, 0);
  EXPECT_EQ(o.http.threads, 3u);
  EXPECT_TRUE(o.store.fsync);
  EXPECT_EQ(o.promote_root, "/srv/p");
  EXPECT_EQ(o.http.header_limit, 128u << 10);
  EXPECT_EQ(o.json.max_body, 1u << 20);
  EXPECT_EQ(o.http.idle_timeout, std::chrono::seconds(5));
  EXPECT_EQ(o.http.header_timeout, std::chrono::seconds(7));
  EXPECT_EQ(o.job_idle, std::chrono::milliseconds(250));
  EXPECT_EQ(o.remote.allowed_endpoints, (std::vector<std::string>{"https://minio:9000"}));
  EXPECT_FALSE(o.remote.aws_enabled);
  EXPECT_FALSE(o.metrics_on);
  EXPECT_EQ(o.log_level, LogSeverity::kError);
  EXPECT_EQ(o.auth.audiences, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.batch.max_soft_errs, UINT32_MAX);
  EXPECT_TRUE(Parse({"--mountpath", "/a", "--port=8081"}, &o).ok());  // getopt's "=" form
  EXPECT_EQ(o.http.port, 8081);
}

// Where a row shows a default that is a value of the flag, it is the option's default: the
// table's column and the code's initializers cannot drift apart.
TEST(ServerFlags, DefaultsShownAreTheDefaults) {
  const ServerOptions defaults;
  int checked = 0;
  for (const Flag& f : ServerFlags()) {
    if (!f.setter.show) continue;
    ServerOptions probe;
    // An unset default (0 threads: two per CPU; no file) is not a value the flag takes: the row
    // says in words what it means.
    if (!f.setter.set(probe, f.setter.show(defaults))) continue;
    ASSERT_NE(f.default_shown, nullptr) << "--" << f.name << " shows no default";
    ServerOptions parsed;
    ASSERT_TRUE(f.setter.set(parsed, f.default_shown)) << "--" << f.name << " default " << f.default_shown;
    EXPECT_EQ(f.setter.show(parsed), f.setter.show(defaults)) << "--" << f.name << "'s default shown";
    ++checked;
  }
  EXPECT_GE(checked, 14);
}

TEST(ServerFlags, ChecksAfterTheFlags) {
  const std::string usage = "\nUsage: aistore-server --mountpath DIR [OPTIONS] (--help lists them)";
  EXPECT_EQ(Parse({}).status().message(), "at least one --mountpath is required" + usage);
  EXPECT_EQ(Parse({"--mountpath", "/a", "extra"}).status().message(), "unexpected argument extra" + usage);
  EXPECT_EQ(Parse({"--bogus"}).status().message(), "unknown flag --bogus" + usage);
  EXPECT_EQ(Parse({"-x"}).status().message(), "unknown flag -x" + usage);
  EXPECT_EQ(Parse({"--mountpath", "/a", "--port"}).status().message(), "--port needs a value (expecting 0..65535)");
  const std::string tls = "--tls-cert and --tls-key go together (and --tls-client-ca needs them)";
  EXPECT_EQ(Parse({"--mountpath", "/a", "--tls-cert", "c"}).status().message(), tls);
  EXPECT_EQ(Parse({"--mountpath", "/a", "--tls-key", "k"}).status().message(), tls);
  EXPECT_EQ(Parse({"--mountpath", "/a", "--tls-client-ca", "ca"}).status().message(), tls);
  EXPECT_TRUE(Parse({"--mountpath", "/a", "--tls-cert", "c", "--tls-key", "k", "--tls-client-ca", "ca"}).ok());
}

TEST(ServerFlags, APrintCommandStopsTheParse) {
  EXPECT_EQ(*Parse({"--help", "--bogus"}), Command::kHelp);  // no mountpath needed either
  EXPECT_EQ(*Parse({"--version"}), Command::kVersion);
  EXPECT_EQ(*Parse({"--print-openapi"}), Command::kPrintOpenApi);
  EXPECT_EQ(*Parse({"--print-flags-markdown"}), Command::kPrintFlagsMarkdown);
  EXPECT_FALSE(Parse({"--port", "x", "--help"}).ok());  // in order, as given
}

TEST(ServerFlags, HelpListsEveryRowWrapped) {
  const std::string help = Usage();
  std::istringstream lines(help);
  std::set<std::string> listed;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 100u) << line;
    std::smatch m;
    if (std::regex_search(line, m, std::regex("^  --([a-z0-9-]+)"))) listed.insert(m[1]);
  }
  for (const Flag& f : ServerFlags()) {
    EXPECT_TRUE(listed.count(f.name)) << "--help does not list --" << f.name << ":\n" << help;
  }
  EXPECT_EQ(listed.size(), ServerFlags().size());
  for (const char* section : {"\nGeneral:", "\nTLS (", "\nAccess control (", "\nLimits (", "\nLogs and metrics:"}) {
    EXPECT_NE(help.find(section), std::string::npos) << section;
  }
  // A flag's text starts on its own line, or after the flag where it fits.
  EXPECT_NE(help.find("\n  --max-connections N       open connections; more get 503 + Retry-After (default "
                      "8192)\n"),
            std::string::npos)
      << help;
}

TEST(ServerFlags, TheCommittedDocsAreWhatTheTablePrints) {
  const std::filesystem::path doc = std::filesystem::path(AIS_SOURCE_DIR) / ".." / ".." / "docs" / "server-flags.md";
  std::ifstream in(doc);
  ASSERT_TRUE(in) << doc;
  std::stringstream committed;
  committed << in.rdbuf();
  const std::string printed = FlagsMarkdown();
  for (const Flag& f : ServerFlags()) {
    EXPECT_NE(printed.find("| `--" + std::string(f.name)), std::string::npos) << f.name;
  }
  EXPECT_EQ(committed.str(), printed)
      << "docs/server-flags.md is stale: build/dev/server/aistore-server --print-flags-markdown > "
         "docs/server-flags.md";
}

}  // namespace
}  // namespace ais
