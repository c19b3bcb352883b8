// LibarchiveShard: a compressed tar (.tgz/.tar.gz, .tar.lz4) or zip shard read through
// libarchive. One cursor (an open reader) serves all lookups of a request: members requested in
// archive order cost one pass; a member behind the cursor reopens the archive (cheap for zip,
// whose reader seeks by the central directory).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "archive/shard.h"

struct archive;

namespace ais {

class LibarchiveShard : public Shard {
 public:
  LibarchiveShard(std::shared_ptr<const ObjectHandle> obj, ArchiveFormat format);
  ~LibarchiveShard() override;

  Result<Member> Find(std::string_view path) override;
  Status Read(std::string_view path, uint64_t start, uint64_t len, const ByteSink& out) override;
  Status ForEach(const std::function<Status(const Member&)>& fn) override;

  // Members remembered by name (seen_), and handed to ForEach's callback per pass: past them, a
  // lookup walks the archive again from its start, so memory is bounded whatever it holds.
  static constexpr size_t kMaxKept = 1 << 16;

 private:
  struct Seen {
    size_t index;  // position among all entries
    Member member;
  };
  // REQUIRES: mu_ held (for all below).
  Status Reopen();
  // Reads the next header; false at the end. Leaves the reader at that entry's data.
  Result<bool> NextHeader();
  // Leaves the reader at the data of the member with lookup key `key`; kNotFound if none.
  Result<Member> Position(const std::string& key);
  Status CheckLa(int rc, const char* what);

  // libarchive callbacks (the reader's client data is `this`).
  static ssize_t ReadCb(struct archive*, void* self, const void** buf);
  static int64_t SkipCb(struct archive*, void* self, int64_t request);
  static int64_t SeekCb(struct archive*, void* self, int64_t offset, int whence);

  std::mutex mu_;
  struct archive* a_ = nullptr;  // guarded by mu_
  size_t next_index_ = 0;        // index of the entry the next header read returns
  std::string at_key_;           // the reader stands at this member's unread data ("" if none)
  Member cur_;                   // the entry the reader stands at (valid when at_key_ is set)
  bool complete_ = false;        // every header has been seen once
  std::unordered_map<std::string, Seen> seen_;  // Key(name) -> first regular member with it (up to kMaxKept)
  bool seen_full_ = false;       // a member was not kept in seen_
  uint64_t pos_ = 0;             // read position in the object
  std::vector<char> buf_;
};

}  // namespace ais
