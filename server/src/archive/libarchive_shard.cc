#include "archive/libarchive_shard.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cstdio>

namespace ais {
namespace {

constexpr size_t kReadBlock = 256 << 10;

}  // namespace

LibarchiveShard::LibarchiveShard(std::shared_ptr<const ObjectHandle> obj, ArchiveFormat format)
    : Shard(std::move(obj), format), buf_(kReadBlock) {}

LibarchiveShard::~LibarchiveShard() {
  if (a_) archive_read_free(a_);
}

ssize_t LibarchiveShard::ReadCb(struct archive*, void* ctx, const void** buf) {
  auto* self = static_cast<LibarchiveShard*>(ctx);
  uint64_t size = self->obj_->size();
  if (self->pos_ >= size) return 0;
  size_t n = static_cast<size_t>(std::min<uint64_t>(self->buf_.size(), size - self->pos_));
  if (!self->obj_->ReadAt(self->pos_, self->buf_.data(), n).ok()) return -1;
  self->pos_ += n;
  *buf = self->buf_.data();
  return static_cast<ssize_t>(n);
}

int64_t LibarchiveShard::SkipCb(struct archive*, void* ctx, int64_t request) {
  auto* self = static_cast<LibarchiveShard*>(ctx);
  uint64_t left = self->obj_->size() - std::min(self->pos_, self->obj_->size());
  uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(0, request)), left);
  self->pos_ += n;
  return static_cast<int64_t>(n);
}

int64_t LibarchiveShard::SeekCb(struct archive*, void* ctx, int64_t offset, int whence) {
  auto* self = static_cast<LibarchiveShard*>(ctx);
  auto size = static_cast<int64_t>(self->obj_->size());
  int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? static_cast<int64_t>(self->pos_) : size;
  int64_t to = base + offset;
  if (to < 0) return ARCHIVE_FATAL;
  self->pos_ = static_cast<uint64_t>(std::min(to, size));
  return to;
}

Status LibarchiveShard::CheckLa(int rc, const char* what) {
  if (rc >= ARCHIVE_WARN) return Status::OK();
  const char* err = a_ ? archive_error_string(a_) : nullptr;
  return Status::Corruption(std::string("archive: ") + what + ": " + (err ? err : "failed"));
}

Status LibarchiveShard::Reopen() {
  if (a_) archive_read_free(a_);
  a_ = archive_read_new();
  if (!a_) return Status::IOError("archive_read_new failed");
  next_index_ = 0;
  at_key_.clear();
  pos_ = 0;
  if (format_ == ArchiveFormat::kZip) {
    archive_read_support_format_zip_seekable(a_);
  } else {
    // Compressed tar: accept gzip and lz4 whatever the suffix said.
    archive_read_support_filter_gzip(a_);
    archive_read_support_filter_lz4(a_);
    archive_read_support_format_tar(a_);
    archive_read_support_format_gnutar(a_);
  }
  archive_read_set_callback_data(a_, this);
  archive_read_set_read_callback(a_, &LibarchiveShard::ReadCb);
  archive_read_set_skip_callback(a_, &LibarchiveShard::SkipCb);
  archive_read_set_seek_callback(a_, &LibarchiveShard::SeekCb);
  return CheckLa(archive_read_open1(a_), "open");
}

Result<bool> LibarchiveShard::NextHeader() {
  if (!a_) AIS_RETURN_IF_ERROR(Reopen());
  at_key_.clear();
  for (;;) {
    struct archive_entry* e = nullptr;
    int rc = archive_read_next_header(a_, &e);
    if (rc == ARCHIVE_EOF) {
      complete_ = true;
      return false;
    }
    AIS_RETURN_IF_ERROR(CheckLa(rc, "read header"));
    size_t index = next_index_++;
    if (archive_entry_filetype(e) != AE_IFREG) continue;
    const char* name = archive_entry_pathname(e);
    std::string n = name ? name : "";
    if (n.empty() || n.ends_with('/')) continue;
    if (!archive_entry_size_is_set(e)) return Status::Corruption("archive: member \"" + n + "\" has no size");
    std::string key(Key(n));
    cur_ = Member{.name = n, .size = static_cast<uint64_t>(archive_entry_size(e)), .offset = std::nullopt};
    if (seen_.size() < kMaxKept) {
      seen_.try_emplace(key, Seen{index, cur_});
    } else if (!seen_.contains(key)) {
      seen_full_ = true;
    }
    at_key_ = key;
    return true;
  }
}

Result<Shard::Member> LibarchiveShard::Position(const std::string& key) {
  if (!at_key_.empty() && at_key_ == key) {
    auto it = seen_.find(key);
    if (it != seen_.end() && it->second.index + 1 == next_index_) return it->second.member;
  }
  auto it = seen_.find(key);
  if (it == seen_.end() && complete_ && !seen_full_) return Status::NotFound(key);
  // Behind the reader: the member itself, or, not kept, perhaps its first twin. Walk from the start.
  if ((it != seen_.end() && it->second.index < next_index_) || (it == seen_.end() && seen_full_)) {
    AIS_RETURN_IF_ERROR(Reopen());
  }
  for (;;) {
    auto more = NextHeader();
    if (!more.ok()) return more.status();
    if (!*more) return Status::NotFound(key);
    if (at_key_ == key) {
      auto s = seen_.find(key);
      // Not kept: the walk began before any member of that name, so this is the first.
      if (s == seen_.end()) return cur_;
      if (s->second.index + 1 == next_index_) return s->second.member;  // the first with that name, not a later twin
    }
  }
}

Result<Shard::Member> LibarchiveShard::Find(std::string_view path) {
  std::lock_guard lock(mu_);
  std::string key(Key(path));
  if (auto it = seen_.find(key); it != seen_.end()) return it->second.member;
  return Position(key);
}

Status LibarchiveShard::Read(std::string_view path, uint64_t start, uint64_t len, const ByteSink& out) {
  std::lock_guard lock(mu_);
  std::string key(Key(path));
  auto m = Position(key);
  if (!m.ok()) return m.status();
  at_key_.clear();  // the data is being consumed
  uint64_t skip = start, left = len;
  std::vector<char> buf(kReadBlock);
  while (left > 0) {
    la_ssize_t n = archive_read_data(a_, buf.data(), buf.size());
    if (n < 0) {  // even ARCHIVE_WARN (a zip member's bad CRC): those bytes are lost
      const char* err = archive_error_string(a_);
      return Status::Corruption("archive: member \"" + m->name + "\": " + (err ? err : "damaged data"));
    }
    if (n == 0) return Status::Corruption("archive: member \"" + m->name + "\" is shorter than its header says");
    size_t got = static_cast<size_t>(n);
    size_t from = static_cast<size_t>(std::min<uint64_t>(skip, got));
    skip -= from;
    size_t take = static_cast<size_t>(std::min<uint64_t>(got - from, left));
    if (take > 0) AIS_RETURN_IF_ERROR(out(buf.data() + from, take));
    left -= take;
  }
  return Status::OK();
}

Status LibarchiveShard::ForEach(const std::function<Status(const Member&)>& fn) {
  // In passes of at most kMaxKept members, each from the start (fn may Read, which moves the
  // reader); the lock is not held while fn runs.
  for (size_t done = 0;;) {
    std::vector<Member> batch;
    bool end = false;
    {
      std::lock_guard lock(mu_);
      AIS_RETURN_IF_ERROR(Reopen());
      for (size_t skipped = 0; batch.size() < kMaxKept;) {
        auto more = NextHeader();
        if (!more.ok()) return more.status();
        if (!*more) {
          end = true;
          break;
        }
        if (skipped < done) {
          ++skipped;
          continue;
        }
        batch.push_back(cur_);
      }
    }
    for (const auto& m : batch) AIS_RETURN_IF_ERROR(fn(m));
    done += batch.size();
    if (end) return Status::OK();
  }
}

}  // namespace ais
