#include "server_flags.h"

#include <getopt.h>

#include <cctype>
#include <cstdint>
#include <optional>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "remote/aws_config.h"
#include "util/strings.h"

namespace ais {
namespace {

constexpr const char* kSynopsis = "aistore-server --mountpath DIR [OPTIONS]";
constexpr const char* kAbout = "A single-node storage server speaking the AIStore REST API (/v1/...).";
constexpr const char* kOnStart =
    "On start it prints one line \"aistore-server: listening on http://HOST:PORT\" (https:// with TLS) to "
    "stdout. SIGINT/SIGTERM stop it cleanly.";

// FlagSection's titles and what each says first, in its order.
struct SectionText {
  const char* title;
  const char* intro;  // nullptr: none
};
constexpr SectionText kSections[] = {
    {"General", nullptr},
    {"TLS", "HTTPS only on the port when given; AIS net.http.use_https, server_crt, server_key"},
    {"Access control", "off by default; docs/user-guide.md \"Access control\""},
    {"Limits", "a request over one gets a 4xx, or 503 + Retry-After, never unbounded memory"},
    {"Logs and metrics", nullptr},
    {"Help", nullptr},
};

// ---- what a row does to the options ------------------------------------------------------------

template <typename T>
constexpr bool kIsDuration = false;
template <typename R, typename P>
constexpr bool kIsDuration<std::chrono::duration<R, P>> = true;
template <typename T>
constexpr bool kIsList = false;
template <typename T>
constexpr bool kIsList<std::vector<T>> = true;

// The option a row sets, as `field(options)` names it: a generic lambda, so that one accessor
// serves both to set (ServerOptions&) and to show (const ServerOptions&).
template <typename Field>
using FieldType = std::remove_cvref_t<decltype(std::declval<Field>()(std::declval<ServerOptions&>()))>;

std::string ShowValue(const std::string& s) { return s; }
std::string ShowValue(LogSeverity s) { return std::string(LogLevelName(s)); }
std::string ShowValue(etl::EtlMode m) {
  return m == etl::EtlMode::kOn ? "on" : m == etl::EtlMode::kOff ? "off" : "auto";
}

// A whole number in [lo, hi] (an IEC size such as 64KiB where `iec`) into an integer or a duration.
template <typename Field>
FlagSetter Number(uint64_t lo, uint64_t hi, bool iec, Field field) {
  using T = FieldType<Field>;
  auto spell = [iec](uint64_t n) { return iec ? FormatIecSize(n) : std::to_string(n); };
  return {
      .expects = spell(lo) + ".." + spell(hi),
      .set = [=](ServerOptions& o, std::string_view arg) {
        auto n = iec ? ParseIecSize(arg) : ParseUint(arg);
        if (!n || *n < lo || *n > hi) return false;
        field(o) = T(*n);  // REQUIRES: hi fits in T
        return true;
      },
      .show = [=](const ServerOptions& o) {
        if constexpr (kIsDuration<T>) {
          return spell(static_cast<uint64_t>(field(o).count()));
        } else {
          return spell(static_cast<uint64_t>(field(o)));
        }
      },
  };
}
template <typename Field>
FlagSetter Count(uint64_t lo, uint64_t hi, Field field) {
  return Number(lo, hi, /*iec=*/false, field);
}
template <typename Field>
FlagSetter Size(uint64_t lo, uint64_t hi, Field field) {
  return Number(lo, hi, /*iec=*/true, field);
}

// What `parse` reads from the argument (nullopt: it does not fit); appended where the option is
// a list (a repeatable flag), else replacing it.
template <typename Parse, typename Field>
FlagSetter Value(std::string expects, Parse parse, Field field) {
  using T = FieldType<Field>;
  FlagSetter s{
      .expects = std::move(expects),
      .set = [=](ServerOptions& o, std::string_view arg) {
        auto v = parse(arg);
        if (!v) return false;
        if constexpr (kIsList<T>) {
          field(o).push_back(std::move(*v));
        } else {
          field(o) = std::move(*v);
        }
        return true;
      },
      .show = nullptr,
  };
  if constexpr (requires(const T& t) { ShowValue(t); }) {
    s.show = [=](const ServerOptions& o) { return ShowValue(field(o)); };
  }
  return s;
}

// A switch: the flag sets the option to `value`.
template <typename Field, typename V>
FlagSetter Switch(Field field, V value) {
  return {.expects = "",
          .set = [=](ServerOptions& o, std::string_view) {
            field(o) = value;
            return true;
          },
          .show = nullptr};
}

// The parsers Value takes.
std::optional<std::string> NonEmpty(std::string_view s) {
  if (s.empty()) return std::nullopt;
  return std::string(s);
}
std::optional<std::string> AbsolutePath(std::string_view s) {
  if (s.empty() || s.front() != '/') return std::nullopt;
  return std::string(s);
}
// An absolute path without its trailing '/'s ("/" stays).
std::optional<std::string> AbsoluteDir(std::string_view s) {
  while (s.size() > 1 && s.back() == '/') s.remove_suffix(1);
  return AbsolutePath(s);
}
// Normalized as a bucket's extra.aws.endpoint is compared with it (CheckBucketEndpoint).
std::optional<std::string> S3Endpoint(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::string e = NormalizeEndpoint(s);
  if (!e.starts_with("http://") && !e.starts_with("https://")) return std::nullopt;
  return e;
}
std::optional<LogSeverity> LogLevel(std::string_view s) {
  LogSeverity level;
  if (!ParseLogLevel(s, &level)) return std::nullopt;
  return level;
}

std::optional<etl::EtlMode> EtlModeOf(std::string_view s) {
  if (s == "auto") return etl::EtlMode::kAuto;
  if (s == "on") return etl::EtlMode::kOn;
  if (s == "off") return etl::EtlMode::kOff;
  return std::nullopt;
}

// ---- the table -----------------------------------------------------------------------------------

using S = FlagSection;

std::vector<Flag> MakeFlags() {
  return {
      // General
      {"mountpath", "DIR", S::kGeneral, nullptr,
       "a data directory; repeat for several disks (required, at least one)",
       Value("an absolute path", AbsolutePath, [](auto& o) -> auto& { return o.store.mountpaths; })},
      {"port", "N", S::kGeneral, "8080", "TCP port to listen on; 0 picks a free port",
       Count(0, 65535, [](auto& o) -> auto& { return o.http.port; })},
      {"host", "ADDR", S::kGeneral, "0.0.0.0", "address to bind",
       Value("an address", NonEmpty, [](auto& o) -> auto& { return o.http.host; })},
      {"threads", "N", S::kGeneral, "two per CPU, at least 4", "I/O threads",
       Count(1, 256, [](auto& o) -> auto& { return o.http.threads; })},
      {"getbatch-max-soft-errs", "N", S::kGeneral, "8",
       "GetBatch: missing items (placeholders) a batch may hold before it fails, as AIS "
       "get_batch.max_soft_errs",
       Count(0, UINT32_MAX, [](auto& o) -> auto& { return o.batch.max_soft_errs; })},
      {"promote-root", "DIR", S::kGeneral, "none: promote is off",
       "the only directory tree \"promote\" may read files from (AIS uses /var/lib/ais/promote). Files are "
       "opened beneath it with no symlink followed; FIFOs and devices are refused",
       Value("an absolute path", AbsoluteDir, [](auto& o) -> auto& { return o.promote_root; })},
      {"etl", "MODE", S::kGeneral, "auto",
       "whether ETLs may be initialized (each runs user code as a local process): auto (when tokens are "
       "required, where init needs ADMIN, or when the server listens on loopback only), on (always: anyone "
       "who reaches the port can run code here), off (never)",
       Value("auto, on or off", EtlModeOf, [](auto& o) -> auto& { return o.etl.mode; })},
      {"etl-python", "PATH", S::kGeneral, "python3",
       "the Python that runs ETL transformers (python -m aistore.etl_runtime): it needs this package with its "
       "etl extra (pip install aistore-embedded[etl]) and the Python version the ETL classes were pickled with",
       Value("a program name or path", NonEmpty, [](auto& o) -> auto& { return o.etl.python; })},
      {"allow-s3-endpoint", "URL", S::kGeneral, nullptr,
       "an S3 endpoint a bucket's extra.aws.endpoint may name (repeatable); a bucket may name no other (the "
       "server's own, S3_ENDPOINT or a profile's endpoint_url, needs no listing). Setting extra.aws.endpoint "
       "or extra.aws.profile takes an ADMIN token",
       Value("http(s)://host[:port]", S3Endpoint, [](auto& o) -> auto& { return o.remote.allowed_endpoints; })},
      {"download-allow-loopback", nullptr, S::kGeneral, nullptr,
       "download jobs may fetch links on loopback addresses (127.0.0.0/8, ::1), which the egress guard refuses "
       "otherwise: for tests and single-user laptops only, since anyone who may start a download could then "
       "make this server read its own host's local services. Private ranges need cluster feature "
       "Dload-Allow-Private-Egress instead; link-local, multicast and CGNAT stay refused",
       Switch([](auto& o) -> auto& { return o.download_allow_loopback; }, true)},
      {"no-aws-backend", nullptr, S::kGeneral, nullptr,
       "serve no s3:// buckets (AIS cluster config without backend.aws): requests naming one get 404 at once "
       "instead of reaching out to S3",
       Switch([](auto& o) -> auto& { return o.remote.aws_enabled; }, false)},
      {"fsync", nullptr, S::kGeneral, nullptr,
       "durability: fdatasync object data and directories before every commit (without it, a crash of the "
       "process loses nothing committed, a power loss may lose the last writes)",
       Switch([](auto& o) -> auto& { return o.store.fsync; }, true)},
      {"s3-api-via-root", nullptr, S::kGeneral, nullptr,
       "the S3 API at the root path too (as cluster feature S3-API-via-Root); it is always at /s3",
       Switch([](auto& o) -> auto& { return o.s3_via_root; }, true)},
      {"s3-credentials", "FILE", S::kGeneral, "none: signatures unchecked",
       "an AWS shared-credentials file (INI): every profile's access key may sign S3 requests, and S3 "
       "requests must carry a valid SigV4 signature by one of them, or with --auth-required a token",
       Value("a file name", NonEmpty, [](auto& o) -> auto& { return o.s3_credentials; })},

      // TLS
      {"tls-cert", "FILE", S::kTls, nullptr, "PEM certificate chain, the server's certificate first",
       Value("a file name", NonEmpty, [](auto& o) -> auto& { return o.tls.cert_file; })},
      {"tls-key", "FILE", S::kTls, nullptr, "PEM private key of that certificate",
       Value("a file name", NonEmpty, [](auto& o) -> auto& { return o.tls.key_file; })},
      {"tls-client-ca", "FILE", S::kTls, nullptr,
       "PEM CA certificates: clients must present a certificate one of them signed (mutual TLS; AIS "
       "net.http.client_ca_tls, client_auth_tls 4)",
       Value("a file name", NonEmpty, [](auto& o) -> auto& { return o.tls.client_ca_file; })},

      // Access control
      {"auth-required", nullptr, S::kAccessControl, nullptr,
       "require a valid bearer token (JWT) on every request but /v1/health (as cluster config "
       "auth.client_auth_required, which set-config changes at run time). Tokens are verified with "
       "AIS_AUTHN_PUBLIC_KEY (an RSA public key, PEM) if set, else AIS_AUTHN_SECRET_KEY (an HS256 secret), "
       "else the OIDC issuers below (a key and an issuer together: refused at startup)",
       Switch([](auto& o) -> auto& { return o.auth.required; }, true)},
      {"auth-oidc-issuer", "URL", S::kAccessControl, nullptr,
       "trust tokens of this OIDC issuer (https://; repeatable): its signing keys are discovered "
       "(/.well-known/openid-configuration, JWKS) and refreshed, so it may rotate them while the server runs",
       Value("an issuer URL", NonEmpty, [](auto& o) -> auto& { return o.auth.oidc_issuers; })},
      {"auth-oidc-ca", "FILE", S::kAccessControl, "the system CAs",
       "CA bundle to verify the issuers' TLS certificates with",
       Value("a file name", NonEmpty, [](auto& o) -> auto& { return o.auth.oidc_ca_bundle; })},
      {"auth-audience", "AUD", S::kAccessControl, nullptr,
       "accept only tokens whose \"aud\" holds AUD (repeatable: any of them)",
       Value("an audience", NonEmpty, [](auto& o) -> auto& { return o.auth.audiences; })},

      // Limits
      {"max-connections", "N", S::kLimits, "8192", "open connections; more get 503 + Retry-After",
       Count(1, 1 << 24, [](auto& o) -> auto& { return o.http.max_connections; })},
      {"max-connections-per-address", "N", S::kLimits, "1024",
       "open connections from one client IP address; more get 503 + Retry-After",
       Count(1, 1 << 24, [](auto& o) -> auto& { return o.http.max_connections_per_address; })},
      {"idle-timeout", "SECONDS", S::kLimits, "300",
       "a kept-alive connection may wait this long for its next request",
       Count(1, 86400, [](auto& o) -> auto& { return o.http.idle_timeout; })},
      {"header-timeout", "SECONDS", S::kLimits, "30",
       "a request's header must arrive within this long of its first byte, and a new connection's first "
       "request within this long of its accept",
       Count(1, 3600, [](auto& o) -> auto& { return o.http.header_timeout; })},
      {"max-header-size", "SIZE", S::kLimits, "64KiB", "request header section; larger gets 431",
       Size(1024, 1 << 30, [](auto& o) -> auto& { return o.http.header_limit; })},
      {"max-json-body", "SIZE", S::kLimits, "4MiB", "JSON request body; larger gets 400",
       Size(1024, 1ULL << 32, [](auto& o) -> auto& { return o.json.max_body; })},
      {"max-json-depth", "N", S::kLimits, "32", "nesting of a JSON request body; deeper gets 400",
       Count(2, 10000, [](auto& o) -> auto& { return o.json.max_depth; })},
      {"getbatch-max-items", "N", S::kLimits, "100000", "items in one GetBatch request; more get 400",
       Count(1, 1ULL << 32, [](auto& o) -> auto& { return o.batch.max_items; })},
      {"list-max-page-size", "N", S::kLimits, "10000",
       "entries in one list-objects page, as AIS; larger asks are clamped",
       Count(1, 1 << 24, [](auto& o) -> auto& { return o.max_page_size; })},
      {"lru-min-dont-evict", "MS", S::kLimits, "3600000",
       "the smallest lru.dont_evict_time set-config accepts (AIS: 1h). An object read or written more "
       "recently is never evicted; lower it only to test eviction",
       Count(1000, 86400000, [](auto& o) -> auto& { return o.store.lru_min_dont_evict; })},
      {"header-snapshot-interval", "MS", S::kLimits, "60000",
       "how often the object headers the server knows are saved to each mountpath (when they changed), so "
       "that the first listing after a crash reads few object files; 0: only at a clean stop",
       Count(0, 86400000, [](auto& o) -> auto& { return o.store.header_snapshot_interval; })},
      {"job-idle-timeout", "MS", S::kLimits, "60000",
       "how long a job that idles (get-batch, copy-objects) stays listed as running and idle after its last "
       "work before it ends, as AIS xact.IdleDefault",
       Count(1, 86400000, [](auto& o) -> auto& { return o.job_idle; })},

      // Logs and metrics
      {"access-log", "FILE", S::kLogs, "off",
       "one JSON line per request (time, method, path, status, bytes, duration_us, remote) appended to FILE, "
       "or \"-\" for stderr. Written by its own thread; entries past a queue of 16384 are dropped and counted "
       "(GET /metrics: access_log_dropped_count)",
       Value("a file name or -", NonEmpty, [](auto& o) -> auto& { return o.access_log; })},
      {"log-level", "LEVEL", S::kLogs, "info",
       "the server log (GET /v1/daemon?what=log) keeps lines of this severity and above: info, warning or "
       "error; also at run time: PUT /v1/cluster/setconfig?log.level=LEVEL",
       Value("info, warning or error", LogLevel, [](auto& o) -> auto& { return o.log_level; })},
      {"no-metrics", nullptr, S::kLogs, nullptr,
       "count nothing per request (GET /metrics still answers, with zeros): only to measure what the "
       "counting costs",
       Switch([](auto& o) -> auto& { return o.metrics_on; }, false)},

      // Help
      {"print-openapi", nullptr, S::kHelp, nullptr, "print the OpenAPI document of the REST API (YAML) and exit",
       Switch([](auto& o) -> auto& { return o.command; }, Command::kPrintOpenApi)},
      {"print-flags-markdown", nullptr, S::kHelp, nullptr,
       "print this list of flags as Markdown (docs/server-flags.md) and exit",
       Switch([](auto& o) -> auto& { return o.command; }, Command::kPrintFlagsMarkdown)},
      {"help", nullptr, S::kHelp, nullptr, "show this help and exit",
       Switch([](auto& o) -> auto& { return o.command; }, Command::kHelp)},
      {"version", nullptr, S::kHelp, nullptr, "print the version and exit",
       Switch([](auto& o) -> auto& { return o.command; }, Command::kVersion)},
  };
}

// ---- parsing ---------------------------------------------------------------------------------

// getopt_long returns row i as kFirstRow + i: above any character it returns ('?', ':').
constexpr int kFirstRow = 256;

Status Invalid(const Flag& f, std::string_view value) {
  const std::string expects = f.arg ? f.setter.expects : "no value";
  return Status::InvalidArgument("invalid --" + std::string(f.name) + " " +
                                 (value.empty() ? std::string("\"\"") : std::string(value)) + " (expecting " +
                                 expects + ")");
}

// An error in the command line itself (an unknown flag, a stray argument): a usage line follows.
Status UsageError(const std::string& what) {
  return Status::InvalidArgument(what + "\nUsage: " + kSynopsis + " (--help lists them)");
}

// The flag as --help and the docs name it: "--port N".
std::string Spelled(const Flag& f) {
  std::string s = "--" + std::string(f.name);
  if (f.arg) s += " " + std::string(f.arg);
  return s;
}

// ---- printing --------------------------------------------------------------------------------

constexpr size_t kHelpWidth = 100;
constexpr size_t kHelpColumn = 28;  // where a flag's text starts

// `text` wrapped to kHelpWidth, its first line after `lead` (which stands alone when it leaves
// no room), the others indented to `indent`.
void AppendWrapped(std::string& out, const std::string& lead, size_t indent, std::string_view text) {
  std::string line = lead;
  if (!line.empty() && line.size() + 2 > indent) {
    out += line + "\n";
    line.clear();
  }
  line.resize(indent, ' ');
  bool empty = true;
  std::istringstream words{std::string(text)};
  for (std::string w; words >> w;) {
    if (!empty && line.size() + 1 + w.size() > kHelpWidth) {
      out += line + "\n";
      line.assign(indent, ' ');
      empty = true;
    }
    if (!empty) line += ' ';
    line += w;
    empty = false;
  }
  out += line + "\n";
}

// The help text with its default, as both --help and the docs print it.
std::string Described(const Flag& f) {
  std::string s = f.help;
  if (f.default_shown) s += " (default " + std::string(f.default_shown) + ")";
  return s;
}

}  // namespace

std::span<const Flag> ServerFlags() {
  static const std::vector<Flag> flags = MakeFlags();
  return flags;
}

Result<Command> ParseFlags(int argc, char* argv[], ServerOptions* opts) {
  const std::span<const Flag> flags = ServerFlags();
  std::vector<option> longopts;
  for (size_t i = 0; i < flags.size(); ++i) {
    longopts.push_back(
        {flags[i].name, flags[i].arg ? required_argument : no_argument, nullptr, kFirstRow + static_cast<int>(i)});
  }
  longopts.push_back({nullptr, 0, nullptr, 0});
  optind = 0;  // glibc: start afresh (a test parses many command lines)
  opterr = 0;  // the errors are worded here
  int c;
  // ":" first: a missing argument returns ':' rather than '?'.
  while ((c = getopt_long(argc, argv, ":", longopts.data(), nullptr)) != -1) {
    const Flag* row = nullptr;
    if (c >= kFirstRow) {
      row = &flags[static_cast<size_t>(c - kFirstRow)];
    } else if (optopt >= kFirstRow) {
      row = &flags[static_cast<size_t>(optopt - kFirstRow)];
    }
    if (c == ':') {
      return Status::InvalidArgument("--" + std::string(row->name) + " needs a value (expecting " +
                                     row->setter.expects + ")");
    }
    if (c == '?' && row) {  // a switch given a value: --fsync=yes
      std::string_view given = argv[optind - 1];
      return Invalid(*row, given.substr(given.find('=') + 1));
    }
    if (c == '?') {
      const std::string given = optopt > 0 ? std::string("-") + static_cast<char>(optopt) : argv[optind - 1];
      return UsageError("unknown flag " + given);
    }
    if (!row->setter.set(*opts, optarg ? optarg : "")) return Invalid(*row, optarg ? optarg : "");
    if (opts->command != Command::kServe) return opts->command;
  }
  if (optind < argc) return UsageError("unexpected argument " + std::string(argv[optind]));
  if (opts->store.mountpaths.empty()) return UsageError("at least one --mountpath is required");
  const TlsOptions& tls = opts->tls;
  if (tls.cert_file.empty() != tls.key_file.empty() || (!tls.client_ca_file.empty() && tls.cert_file.empty())) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together (and --tls-client-ca needs them)");
  }
  return Command::kServe;
}

std::string Usage() {
  std::string out = std::string("Usage: ") + kSynopsis + "\n\n" + kAbout + "\n";
  for (size_t s = 0; s < std::size(kSections); ++s) {
    out += std::string("\n") + kSections[s].title;
    if (kSections[s].intro) out += std::string(" (") + kSections[s].intro + ")";
    out += ":\n";
    for (const Flag& f : ServerFlags()) {
      if (static_cast<size_t>(f.section) == s) AppendWrapped(out, "  " + Spelled(f), kHelpColumn, Described(f));
    }
  }
  out += "\n";
  AppendWrapped(out, "", 0, kOnStart);
  return out;
}

std::string FlagsMarkdown() {
  std::string out =
      "# aistore-server flags\n\n"
      "Printed by `aistore-server --print-flags-markdown` from the server's flag table "
      "(`server/src/server_flags.cc`), which also parses the flags, checks their values and prints "
      "`--help`: do not edit; `server/src/server_flags_test.cc` fails while this page is stale.\n\n";
  out += std::string("Usage: `") + kSynopsis + "`\n\n" + kAbout + " " + kOnStart + "\n";
  for (size_t s = 0; s < std::size(kSections); ++s) {
    out += std::string("\n## ") + kSections[s].title + "\n\n";
    if (kSections[s].intro) {
      std::string intro = kSections[s].intro;
      intro[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(intro[0])));
      out += intro + ".\n\n";
    }
    out += "| flag | value | default | meaning |\n|---|---|---|---|\n";
    for (const Flag& f : ServerFlags()) {
      if (static_cast<size_t>(f.section) != s) continue;
      out += "| `" + Spelled(f) + "` | " + (f.arg ? f.setter.expects : "") + " | " +
             (f.default_shown ? f.default_shown : "") + " | " + f.help + " |\n";
    }
  }
  return out;
}

}  // namespace ais
