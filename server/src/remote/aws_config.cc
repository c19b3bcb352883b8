#include "remote/aws_config.h"

#include <dirent.h>

#include <algorithm>
#include <boost/property_tree/ini_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <cstdlib>
#include <optional>
#include <vector>

namespace ais {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string Home() {
  std::string h = Env("HOME");
  return h.empty() ? "/root" : h;
}

// One INI file; nullopt when missing or unparsable (AWS tools skip such files too).
std::optional<boost::property_tree::ptree> ReadIni(const std::string& path) {
  try {
    boost::property_tree::ptree tree;
    boost::property_tree::ini_parser::read_ini(path, tree);
    return tree;
  } catch (const boost::property_tree::ptree_error&) {
    return std::nullopt;
  }
}

struct SharedFiles {
  std::vector<std::string> config;
  std::vector<std::string> credentials;
};

SharedFiles FindSharedFiles() {
  SharedFiles f;
  if (std::string dir = Env("AIS_S3_CONFIG_DIR"); !dir.empty()) {
    if (DIR* d = ::opendir(dir.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n.find("conf") != std::string::npos) f.config.push_back(dir + "/" + n);
        if (n.find("cred") != std::string::npos) f.credentials.push_back(dir + "/" + n);
      }
      ::closedir(d);
    }
    std::sort(f.config.begin(), f.config.end());
    std::sort(f.credentials.begin(), f.credentials.end());
    return f;
  }
  std::string cfg = Env("AWS_CONFIG_FILE");
  std::string cred = Env("AWS_SHARED_CREDENTIALS_FILE");
  f.config.push_back(cfg.empty() ? Home() + "/.aws/config" : cfg);
  f.credentials.push_back(cred.empty() ? Home() + "/.aws/credentials" : cred);
  return f;
}

// The value of `key` in the profile's section of any of `files`: "[name]" in a credentials file,
// "[profile name]" (or "[default]") in a config file.
std::string Lookup(const std::vector<std::string>& files, const std::string& section, const std::string& key) {
  for (const auto& path : files) {
    auto tree = ReadIni(path);
    if (!tree) continue;
    if (auto v = tree->get_optional<std::string>(boost::property_tree::ptree::path_type(section + "/" + key, '/'))) {
      return *v;
    }
  }
  return {};
}

}  // namespace

std::string AwsSettings::Describe() const {
  return "profile=\"" + profile + "\", region=\"" + region + "\", endpoint=\"" + endpoint + "\"";
}

Result<AwsSettings> ResolveAwsSettings(const AwsBucketConfig& bucket) {
  AwsSettings s;
  const bool named_profile = !bucket.profile.empty();
  s.profile = named_profile ? bucket.profile : Env("AWS_PROFILE");
  if (s.profile.empty()) s.profile = "default";
  SharedFiles files = FindSharedFiles();
  const std::string cred_section = s.profile;
  const std::string cfg_section = s.profile == "default" ? "default" : "profile " + s.profile;

  // Credentials: the environment unless the bucket names its own profile, then the files.
  if (!named_profile) {
    s.access_key = Env("AWS_ACCESS_KEY_ID");
    s.secret_key = Env("AWS_SECRET_ACCESS_KEY");
    s.session_token = Env("AWS_SESSION_TOKEN");
  }
  if (s.access_key.empty()) {
    for (const auto* list : {&files.credentials, &files.config}) {
      const std::string& section = list == &files.credentials ? cred_section : cfg_section;
      s.access_key = Lookup(*list, section, "aws_access_key_id");
      if (s.access_key.empty()) continue;
      s.secret_key = Lookup(*list, section, "aws_secret_access_key");
      s.session_token = Lookup(*list, section, "aws_session_token");
      break;
    }
    if (named_profile && s.access_key.empty()) {
      return Status::InvalidArgument("aws profile \"" + s.profile + "\" has no credentials in the shared files");
    }
  }
  if (!s.access_key.empty() && s.secret_key.empty()) {
    return Status::InvalidArgument("aws profile \"" + s.profile + "\": access key without a secret key");
  }

  s.region = bucket.region;
  if (s.region.empty()) s.region = Lookup(files.config, cfg_section, "region");
  if (s.region.empty()) s.region = Env("AWS_REGION");
  if (s.region.empty()) s.region = Env("AWS_DEFAULT_REGION");
  if (s.region.empty()) s.region = "us-east-1";

  const bool region_ok = s.region.size() <= 64 && std::all_of(s.region.begin(), s.region.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
  if (!region_ok) return Status::InvalidArgument("invalid aws region \"" + s.region.substr(0, 64) + "\"");

  s.endpoint = bucket.endpoint;
  if (s.endpoint.empty()) s.endpoint = Env("S3_ENDPOINT");
  if (s.endpoint.empty()) s.endpoint = Lookup(files.config, cfg_section, "endpoint_url");
  s.endpoint = NormalizeEndpoint(s.endpoint);
  // A custom endpoint (MinIO, a test server, an IP address) rarely resolves <bucket>.<host>.
  s.path_style = bucket.path_style || !s.endpoint.empty();
  return s;
}

std::string NormalizeEndpoint(std::string_view endpoint) {
  std::string e(endpoint);
  while (!e.empty() && e.back() == '/') e.pop_back();
  if (!e.empty() && e.find("://") == std::string::npos) e = "https://" + e;
  return e;
}

Status CheckBucketEndpoint(std::string_view endpoint, const std::vector<std::string>& allowed) {
  const std::string e = NormalizeEndpoint(endpoint);
  if (e.empty()) return Status::OK();
  for (const auto& a : allowed) {
    if (NormalizeEndpoint(a) == e) return Status::OK();
  }
  std::string msg = "extra.aws.endpoint \"" + e.substr(0, 128) + "\" is not an endpoint this server may reach";
  msg += allowed.empty() ? " (the operator allows none: aistore-server --allow-s3-endpoint URL)"
                         : " (aistore-server --allow-s3-endpoint lists those it may)";
  return Status::Forbidden(msg);
}

}  // namespace ais
