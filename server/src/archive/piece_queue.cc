#include "archive/piece_queue.h"

#include <algorithm>

namespace ais {
namespace {

Status Gone() { return Status::IOError("GetBatch: the client went away"); }

}  // namespace

PieceQueue::PieceQueue(Limits limits, std::function<void()> notify) : limits_(limits), notify_(std::move(notify)) {}

bool PieceQueue::WaitForRoom(std::unique_lock<std::mutex>& lock) {
  room_.wait(lock, [&] { return cancelled_ || (memory_ < limits_.max_memory && files_ < limits_.max_files); });
  return !cancelled_;
}

void PieceQueue::MaybeNotify(std::unique_lock<std::mutex>& lock) {
  if (!waiting_ || (!closed_ && pending_ < want_)) return;
  waiting_ = false;
  lock.unlock();
  notify_();
}

Status PieceQueue::Append(const void* data, size_t len) {
  const std::string_view part(static_cast<const char*>(data), len);
  return AppendParts(&part, 1);
}

Status PieceQueue::AppendParts(const std::string_view* parts, size_t n) {
  std::unique_lock lock(mu_);
  if (!WaitForRoom(lock)) return Gone();
  for (size_t i = 0; i < n; ++i) CopyIn(parts[i].data(), parts[i].size());
  MaybeNotify(lock);
  return Status::OK();
}

void PieceQueue::CopyIn(const char* p, size_t len) {
  while (len > 0) {
    if (pieces_.empty() || pieces_.back().is_file() || pieces_.back().sealed ||
        pieces_.back().mem.size() >= limits_.block) {
      pieces_.emplace_back();
      pieces_.back().mem.reserve(limits_.block);
    }
    std::string& mem = pieces_.back().mem;
    size_t n = std::min(len, limits_.block - mem.size());
    mem.append(p, n);
    p += n;
    len -= n;
    memory_ += n;
    pending_ += n;
  }
}

Status PieceQueue::AppendOwned(ByteBuffer bytes) {
  constexpr size_t kCopyBelow = 4096;  // small pieces are merged: fewer iovecs per write
  if (bytes.size() < kCopyBelow) return Append(bytes.data(), bytes.size());
  std::unique_lock lock(mu_);
  if (!WaitForRoom(lock)) return Gone();
  memory_ += bytes.size();
  pending_ += bytes.size();
  Piece piece;
  piece.owned = std::move(bytes);
  piece.sealed = true;
  pieces_.push_back(std::move(piece));
  MaybeNotify(lock);
  return Status::OK();
}

Status PieceQueue::AppendFile(const FileSegment& seg, std::shared_ptr<const void> owner) {
  if (seg.len == 0) return Status::OK();
  std::unique_lock lock(mu_);
  if (!WaitForRoom(lock)) return Gone();
  Piece piece;
  piece.file = seg;
  piece.owner = std::move(owner);
  pieces_.push_back(std::move(piece));
  ++files_;
  pending_ += seg.len;
  MaybeNotify(lock);
  return Status::OK();
}

void PieceQueue::Close(Status final) {
  std::unique_lock lock(mu_);
  if (closed_) return;
  closed_ = true;
  final_ = std::move(final);
  MaybeNotify(lock);
}

PieceQueue::Taken PieceQueue::Take(size_t min_bytes) {
  Taken out;
  std::unique_lock lock(mu_);
  out.closed = closed_;
  if (closed_) out.final = final_;
  if (pending_ == 0 || (!closed_ && pending_ < min_bytes)) {
    if (!closed_) {
      waiting_ = true;
      want_ = std::max<size_t>(1, std::min(min_bytes, limits_.notify_bytes));
    }
    out.closed = closed_ && pending_ == 0;
    return out;
  }
  out.pieces.swap(pieces_);
  pieces_.reserve(out.pieces.size());  // about as many next time: no regrowth, item by item
  out.closed = closed_;  // everything there was is taken
  memory_ = files_ = 0;
  pending_ = 0;
  waiting_ = false;
  lock.unlock();
  room_.notify_all();
  return out;
}

void PieceQueue::Cancel() {
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    waiting_ = false;
  }
  room_.notify_all();
}

bool PieceQueue::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

}  // namespace ais
