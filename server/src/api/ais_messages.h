// AIS control messages as typed structs, each decoded by JsonFields (util/json_fields.h): a wrong
// type, an out-of-range number or a key the AIS message does not have is a 400 naming the field.
// Field names are AIS's (api/apc, xact, cmn); Go fields without a json tag go by their Go name
// ("ID", "Kind", "TxnUUID"), which JsonFields matches case-insensitively. Fields of the AIS
// message that this one-node server has no use for are accepted and ignored, so every real
// client's message decodes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/bck.h"
#include "util/json_fields.h"
#include "util/status.h"

namespace ais {

// apc.ActMsg {"action", "name", "value"}: the envelope of every control request; `value` is
// decoded by the action's own message below.
struct ActionMsg {
  std::string action;
  std::string name;
  nlohmann::json value;  // null when absent

  static Result<ActionMsg> Decode(const nlohmann::json& body);
  // For actions that take no value: it must be absent, null or {}.
  Status CheckNoValue() const;
};

// cmn.Bck {"name", "provider", "namespace": {"uuid", "name"}}; `provider` "" means ais.
struct BucketRef {
  std::string name;
  std::string provider;
  std::string ns_uuid, ns_name;

  void Read(JsonFields& f);
  BucketNs ns() const { return {ns_uuid, ns_name}; }
  // Provider ais, global or a local namespace (a remote cluster's is not served where a BucketRef
  // is read); name may be empty (not given).
  Status CheckServed(std::string_view what) const;
  // The store key (store/bck.h) of an ais bucket CheckServed accepted, or of a cloud bucket of
  // the global namespace; "" when no name is given.
  Result<std::string> Key(std::string_view what) const;
};

// xact.QueryMsg (GET /v1/cluster?what=...) and xact.ArgsMsg (PUT start/stop value): which jobs.
struct XactMsg {
  std::string id;
  std::string kind;
  std::string node;
  BucketRef bck;
  std::vector<BucketRef> buckets;
  std::optional<bool> show_active;  // QueryMsg only; null = not given (the CLI sends null)
  bool force = false;
  int64_t timeout = 0;  // ArgsMsg.Timeout, a Go Duration in ns

  // `path` names the object in errors: "" for a query body, "value" for an action's value.
  static Result<XactMsg> Decode(const nlohmann::json& j, std::string path);
};

// apc.TCBMsg (copy-bck value) and the TCB part of apc.TCOMsg.
struct CopyMsg {
  std::string prefix;
  std::string prepend;
  std::vector<std::pair<std::string, std::string>> ext;  // extension renames, "from" -> "to"
  bool dry_run = false;
  bool continue_on_err = false;
  bool latest = false;       // "latest-ver": a remote source's cached copies re-checked (refetched if changed)
  bool sync = false;         // "synchronize": also delete what the remote source no longer has
  int64_t num_workers = 0;   // "num-workers": 0 auto, -1 serial
  std::string etl_name;                // "id": etl-bck / etl-listrange: the ETL
  std::vector<std::string> pipeline;   // "pipeline": the ETLs after it

  void Read(JsonFields& f);
  static Result<CopyMsg> Decode(const nlohmann::json& value);
};

// The value of the multi-object actions: apc.ListRange plus, by action,
//   delete-/evict-listrange: apc.EvdMsg; prefetch-listrange: apc.PrefetchMsg;
//   copy-listrange: cmn.TCOMsg (TCBMsg + "tobck"); archive: cmn.ArchiveMsg (+ "tobck").
struct MultiObjMsg {
  std::string tmpl;                     // "template"
  std::vector<std::string> objnames;    // "objnames"
  BucketRef to_bck;                     // "tobck" (copy, archive); empty name: the source bucket
  CopyMsg copy;                         // copy-listrange
  std::string archname, mime;           // archive
  bool include_src_bucket = false;      // archive "isbn"
  bool append = false;                  // archive "aate"
  bool continue_on_err = false;         // "coer"
  int64_t num_workers = 0;              // "num-workers": 0 auto, -1 serial
  bool latest = false;                  // prefetch "latest-ver"
  uint64_t blob_threshold = 0;          // prefetch "blob-threshold": objects this big use the blob downloader
  uint64_t blob_chunk_size = 0;         // prefetch "blob-chunk-size"
  int64_t blob_workers = 0;             // prefetch "blob-num-workers"

  static Result<MultiObjMsg> Decode(const std::string& action, const nlohmann::json& value);
};

// apc.BsummCtrlMsg (summary-bck value).
struct SummaryMsg {
  std::string uuid;
  std::string prefix;

  static Result<SummaryMsg> Decode(const nlohmann::json& value);
};

// apc.PromoteArgs (promote value).
struct PromoteMsg {
  std::string src;
  std::string obj;
  bool recursive = false;
  bool overwrite = false;
  bool delete_src = false;

  static Result<PromoteMsg> Decode(const nlohmann::json& value);
};

// apc.RechunkMsg (rechunk value); absent sizes keep the bucket's.
struct RechunkMsg {
  std::optional<uint64_t> objsize_limit;
  std::optional<uint64_t> chunk_size;
  std::string prefix;

  static Result<RechunkMsg> Decode(const nlohmann::json& value);
};

// apc.BlobMsg (blob-download value).
struct BlobMsg {
  uint64_t chunk_size = 0;
  int64_t num_workers = 0;
  bool latest = false;

  static Result<BlobMsg> Decode(const nlohmann::json& value);
};

// The part numbers of mpt-complete's value: [{"part-number": N, "etag": "..."}, ...], N in [1, max].
Result<std::vector<uint32_t>> DecodeMptParts(const nlohmann::json& value, uint32_t max);

// Custom metadata of an object PATCH: {"key": "value", ...}.
Result<std::vector<std::pair<std::string, std::string>>> DecodeCustomMd(const nlohmann::json& value);

}  // namespace ais
