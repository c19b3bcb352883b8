// Helpers for the archive unit tests only: an in-memory sink, archives built and read back
// through libarchive, objects put into a Store.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "archive/archive_writer.h"
#include "archive/output_sink.h"
#include "store/store.h"
#include "util/file.h"

namespace ais::test {

// Collects everything in memory; file segments are read at once.
class StringSink : public OutputSink {
 public:
  Status Append(const void* data, size_t len) override {
    out.append(static_cast<const char*>(data), len);
    return Status::OK();
  }
  Status AppendFile(const FileSegment& seg, std::shared_ptr<const void>) override {
    std::string buf(seg.len, '\0');
    AIS_RETURN_IF_ERROR(PreadAll(seg.fd, buf.data(), seg.len, seg.offset));
    out += buf;
    ++files;
    return Status::OK();
  }
  std::string out;
  size_t files = 0;
};

struct Entry {
  std::string name;
  std::string data;
  int64_t mtime = 0;
  bool regular = true;
};

inline std::string Bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// An archive of `format` holding `entries`, written by our writers.
inline std::string BuildArchive(ArchiveFormat format, const std::vector<Entry>& entries) {
  StringSink sink;
  auto w = ArchiveWriter::Create(format, &sink);
  EXPECT_TRUE(w.ok()) << w.status().message();
  for (const auto& e : entries) {
    EXPECT_TRUE((*w)->BeginEntry(e.name, e.data.size(), e.mtime).ok());
    EXPECT_TRUE((*w)->Write(e.data.data(), e.data.size()).ok());
    EXPECT_TRUE((*w)->EndEntry().ok());
  }
  EXPECT_TRUE((*w)->Finish().ok());
  w->reset();
  return sink.out;
}

// Every entry of an archive (any format libarchive reads), as libarchive sees it. `complete`
// tells whether the archive ended properly.
inline std::vector<Entry> ReadArchive(const std::string& bytes, bool* complete = nullptr) {
  std::vector<Entry> out;
  struct archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  archive_read_support_format_raw(a);
  bool ok = archive_read_open_memory(a, bytes.data(), bytes.size()) == ARCHIVE_OK;
  EXPECT_TRUE(ok) << archive_error_string(a);
  bool clean = false;
  while (ok) {
    struct archive_entry* e = nullptr;
    int rc = archive_read_next_header(a, &e);
    if (rc == ARCHIVE_EOF) {
      clean = true;
      break;
    }
    if (rc < ARCHIVE_WARN) break;
    Entry ent;
    ent.name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    ent.mtime = archive_entry_mtime(e);
    ent.regular = archive_entry_filetype(e) == AE_IFREG;
    char buf[65536];
    la_ssize_t n;
    while ((n = archive_read_data(a, buf, sizeof(buf))) > 0) ent.data.append(buf, static_cast<size_t>(n));
    if (n < 0) break;
    out.push_back(std::move(ent));
  }
  archive_read_free(a);
  if (complete) *complete = clean;
  return out;
}

inline void PutObject(Store& store, const std::string& bucket, const std::string& name, const std::string& data) {
  PutOptions opts;
  opts.size = data.size();
  auto w = store.BeginPut(bucket, name, opts);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE((*w)->Write(data.data(), data.size()).ok());
  ObjectMeta meta;
  ASSERT_TRUE((*w)->Commit(&meta).ok());
}

}  // namespace ais::test
