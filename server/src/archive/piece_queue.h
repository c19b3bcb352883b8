// PieceQueue: the bounded hand-off of archive bytes from the thread that assembles a GetBatch
// archive to the connection that sends it.
//
// Producer (one thread): Append/AppendFile block while the queue holds more than its limits,
// and fail once the consumer has cancelled. Close() ends the stream with a final status.
// Consumer (the connection's coroutine): Take() never blocks; it returns everything queued, or
// nothing and arms the notification, which the producer then fires (from its own thread) once
// enough bytes are queued or the stream is closed. The notifier must be cheap and thread-safe
// (e.g. post to the consumer's executor).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "archive/output_sink.h"
#include "util/byte_buffer.h"

namespace ais {

class PieceQueue : public OutputSink {
 public:
  struct Limits {
    size_t max_memory = 4 << 20;  // queued memory bytes before the producer blocks
    size_t max_files = 256;       // queued file pieces (open fds) before the producer blocks
    size_t notify_bytes = 256 << 10;  // queued bytes (memory + file) worth waking the consumer for
    size_t block = 256 << 10;     // memory pieces are merged into blocks of about this size
  };
  // One run of output: memory bytes, or a file segment (is_file()).
  struct Piece {
    std::string mem;    // copied-in bytes
    ByteBuffer owned;   // or an AppendOwned buffer, as it was handed in (sealed)
    FileSegment file{-1, 0, 0};
    std::shared_ptr<const void> owner;
    bool sealed = false;  // an AppendOwned buffer: nothing is appended to it
    bool is_file() const { return file.fd >= 0; }
    // The memory bytes. REQUIRES: !is_file().
    const char* data() const { return sealed ? owned.data() : mem.data(); }
    uint64_t size() const { return is_file() ? file.len : sealed ? owned.size() : mem.size(); }
  };
  struct Taken {
    std::vector<Piece> pieces;
    bool closed = false;  // no more pieces will ever come
    Status final;         // when closed: OK, or why the stream stopped early
  };

  PieceQueue(Limits limits, std::function<void()> notify);

  Status Append(const void* data, size_t len) override;
  Status AppendParts(const std::string_view* parts, size_t n) override;
  // Kept as its own piece (no copy) unless small.
  Status AppendOwned(ByteBuffer bytes) override;
  Status AppendFile(const FileSegment& seg, std::shared_ptr<const void> owner) override;
  // Ends the stream. `final` non-OK: the archive is incomplete.
  void Close(Status final);

  // Everything queued if it is at least `min_bytes` (or the stream is closed); otherwise nothing,
  // and the notifier fires when that changes.
  Taken Take(size_t min_bytes);
  // The consumer is gone: blocked and future producer calls fail.
  void Cancel();
  bool cancelled() const;

 private:
  // REQUIRES: mu_ held. Blocks until there is room; false if cancelled.
  bool WaitForRoom(std::unique_lock<std::mutex>& lock);
  // REQUIRES: mu_ held. Copies into the last memory piece, opening new ones as blocks fill.
  void CopyIn(const char* p, size_t len);
  // REQUIRES: mu_ held. Fires the notifier (outside the lock) when the consumer waits for this.
  void MaybeNotify(std::unique_lock<std::mutex>& lock);

  const Limits limits_;
  const std::function<void()> notify_;
  mutable std::mutex mu_;
  std::condition_variable room_;
  // Guarded by mu_:
  std::vector<Piece> pieces_;
  size_t memory_ = 0;
  size_t files_ = 0;
  uint64_t pending_ = 0;  // memory + file bytes queued
  size_t want_ = 0;       // the consumer waits for this many pending bytes
  bool waiting_ = false;
  bool closed_ = false;
  bool cancelled_ = false;
  Status final_;
};

}  // namespace ais
