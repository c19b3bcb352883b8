// The input is the start of an object file (magic, lengths, msgpack metadata, data), read by
// ReadObjectHeader (store/object_meta.h) through a memfd, with and without the read-ahead of
// the object's first bytes that GetBatch uses. The same bytes also drive a FuzzedDataProvider
// that builds an ObjectMeta for the encoder.
//
// Properties: decode(encode(m)) == m for a built meta; a decoded meta, encoded again, decodes to
// itself; the read-ahead never claims more bytes than it was given or than the object holds.
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "store/object_meta.h"

namespace {

bool Same(const ais::ObjectMeta& a, const ais::ObjectMeta& b) {
  return a.name == b.name && a.size == b.size && a.version == b.version && a.cksum_type == b.cksum_type &&
         a.cksum_value == b.cksum_value && a.atime_ns == b.atime_ns && a.custom == b.custom &&
         a.upload_id == b.upload_id && a.chunk_sizes == b.chunk_sizes;
}

// One reusable in-memory file per use.
int File(int which, const void* data, size_t len) {
  static int fds[2] = {memfd_create("fuzz_object_a", 0), memfd_create("fuzz_object_b", 0)};
  int fd = fds[which];
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(ftruncate(fd, 0) == 0);
  FUZZ_CHECK(pwrite(fd, data, len, 0) == static_cast<ssize_t>(len));
  return fd;
}

// Encodes `m` as the store writes it and reads it back.
ais::Result<ais::ObjectMeta> RoundTrip(const ais::ObjectMeta& m) {
  uint64_t off = 0;
  std::string header = ais::EncodeObjectHeader(m, !m.chunked(), &off);
  FUZZ_CHECK(m.chunked() ? off == 0 : off % ais::kDataAlign == 0 && off >= header.size());
  uint64_t got_off = 0;
  auto back = ais::ReadObjectHeader(File(1, header.data(), header.size()), &got_off);
  if (back.ok()) FUZZ_CHECK(got_off == off);
  return back;
}

ais::ObjectMeta Build(FuzzedDataProvider& fdp) {
  ais::ObjectMeta m;
  m.name = fdp.ConsumeRandomLengthString(300);
  m.size = fdp.ConsumeIntegral<uint64_t>();
  m.version = fdp.ConsumeIntegral<uint64_t>();
  m.cksum_type = fdp.ConsumeRandomLengthString(16);
  m.cksum_value = fdp.ConsumeRandomLengthString(130);
  m.atime_ns = fdp.ConsumeIntegral<int64_t>();
  for (int n = fdp.ConsumeIntegralInRange(0, 4); n > 0; --n) {
    m.custom.emplace_back(fdp.ConsumeRandomLengthString(40), fdp.ConsumeRandomLengthString(40));
  }
  if (fdp.ConsumeBool()) {
    m.upload_id = fdp.ConsumeRandomLengthString(20);
    if (m.chunked()) {
      for (int n = fdp.ConsumeIntegralInRange(0, 8); n > 0; --n) m.chunk_sizes.push_back(fdp.ConsumeIntegral<uint64_t>());
    }
  }
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = File(0, data, size);
  uint64_t off = 0;
  auto meta = ais::ReadObjectHeader(fd, &off);
  std::vector<char> ahead(8192);
  size_t got = 0;
  uint64_t off2 = 0;
  auto meta2 = ais::ReadObjectHeader(fd, &off2, ahead, &got);
  FUZZ_CHECK(meta.ok() == meta2.ok());
  if (meta.ok()) {
    FUZZ_CHECK(Same(*meta, *meta2) && off == off2);
    FUZZ_CHECK(got <= ahead.size() && got <= meta->size);
    if (got > 0) FUZZ_CHECK(off == ais::kDataAlign && size >= ais::kDataAlign + got);
    auto again = RoundTrip(*meta);
    FUZZ_CHECK(again.ok() && Same(*again, *meta));
  } else {
    FUZZ_CHECK(got == 0);
  }

  FuzzedDataProvider fdp(data, size);
  ais::ObjectMeta built = Build(fdp);
  auto back = RoundTrip(built);
  FUZZ_CHECK(back.ok() && Same(*back, built));
  return 0;
}
