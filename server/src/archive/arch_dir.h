// ArchDir: list-objects with the `LsArchDir` flag (getbatch.md §7): every object whose name ends
// in an archive suffix (.tar, .tgz, .tar.gz, .tar.lz4, .zip) is followed by one entry per file
// inside it, `<object>/<path>`, sorted by path, with the file's size. A page may end inside an
// archive: the next page resumes after that member; a prefix may reach into one (`a.tar/dir/`).
// Knows the store and the archive readers, not HTTP.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.h"
#include "util/status.h"

namespace ais {

inline constexpr uint16_t kEntryInArch = 128;    // a file inside an archive (AIS EntryInArch)
inline constexpr uint16_t kEntryIsArchive = 512;  // an object listed with its files (EntryIsArchive)

struct ArchDirEntry {
  ObjectMeta meta;     // for a file inside an archive: its archive's, with its own name and size
  uint16_t flags = 0;  // kEntryIsArchive or kEntryInArch, to OR into the object's own flags
};

// At most q.limit entries after q.after (exclusive) whose names start with q.prefix, archived
// files expanded. A shard that cannot be read is listed without its files.
Result<std::vector<ArchDirEntry>> ListWithArchives(Store& store, const std::string& bucket, const ListQuery& q);

}  // namespace ais
