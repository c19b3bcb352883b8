// The server's command line: one table of flags (ServerFlags) that parses argv (getopt's
// option array is built from it), checks each argument, and prints --help and
// docs/server-flags.md. A new flag is one row.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "auth/authorizer.h"
#include "etl/etl_manager.h"
#include "handlers/batch_stream.h"
#include "http/server.h"
#include "http/tls.h"
#include "jobs/job_registry.h"
#include "remote/cache_tier.h"
#include "store/store.h"
#include "util/json_fields.h"
#include "util/log_ring.h"
#include "util/status.h"

namespace ais {

// What the command line asks for: to serve, or to print something and exit.
enum class Command { kServe, kHelp, kVersion, kPrintOpenApi, kPrintFlagsMarkdown };

// Everything the flags set; default-constructed, it is what no flag at all means.
struct ServerOptions {
  Command command = Command::kServe;
  StoreOptions store;
  HttpServerOptions http;
  BatchConfig batch;
  JsonLimits json;                    // main installs it as DefaultJsonLimits()
  std::string promote_root;           // "": promote is off
  uint64_t max_page_size = 10000;     // entries in one list-objects page
  std::chrono::milliseconds job_idle = JobRegistry::kDefaultIdleTimeout;
  bool s3_via_root = false;           // cluster feature S3-API-via-Root
  bool download_allow_loopback = false;  // download jobs may fetch from loopback addresses
  std::string s3_credentials;         // "": S3 signatures unchecked
  bool metrics_on = true;
  std::string access_log;             // "": off; "-": stderr
  LogSeverity log_level = LogSeverity::kInfo;
  CacheTierOptions remote;
  etl::EtlOptions etl;                // dir: main sets it (<mountpath 0>/.ais.etl)
  auth::AuthConfig auth;              // main adds the signature key from the environment
  TlsOptions tls;
};

// What a flag does to the options.
struct FlagSetter {
  // What the argument must be, as the error and the docs say it ("1..65535"); "" for a switch.
  std::string expects;
  // Reads the argument (empty for a switch) into the options; false if it does not fit.
  std::function<bool(ServerOptions&, std::string_view)> set;
  // The option's value spelled as the argument would be; unset for switches and lists. Lets a
  // test hold each row's default_shown to the default it shows.
  std::function<std::string(const ServerOptions&)> show;
};

// Where a flag is listed in --help and docs/server-flags.md, in this order.
enum class FlagSection { kGeneral, kTls, kAccessControl, kLimits, kLogs, kHelp };

struct Flag {
  const char* name;           // "max-connections" for --max-connections
  const char* arg;            // the argument's name in --help ("N", "SIZE", "DIR"); nullptr: a switch
  FlagSection section;
  const char* default_shown;  // what no flag means, as --help says it; nullptr: nothing to say
  const char* help;           // one paragraph; printed wrapped
  FlagSetter setter;
};

// The table, in --help's order within each section.
std::span<const Flag> ServerFlags();

// Parses argv into *opts (which holds the defaults). Each flag's argument is checked by its row;
// after the flags, a server needs at least one --mountpath, and --tls-cert with --tls-key.
// A print command (--help...) stops the parse where it stands. The error is the line to print
// after "aistore-server: " (exit 2), e.g. "invalid --port 70000 (expecting 0..65535)"; where the
// command line itself is wrong (an unknown flag, a stray argument), a usage line follows it.
Result<Command> ParseFlags(int argc, char* argv[], ServerOptions* opts);

// --help: every row by section, wrapped to 100 columns.
std::string Usage();

// docs/server-flags.md: every row, a table per section.
std::string FlagsMarkdown();

}  // namespace ais
