#include "service/object_read.h"

#include "api/byte_range.h"

namespace ais {

Result<ObjectRead> OpenObjectRead(ServerContext& ctx, const std::string& bucket, const std::string& name,
                                  std::string_view range, const std::function<Status(const ObjectMeta&)>* precheck,
                                  std::optional<uint64_t>* unsatisfiable_size) {
  ObjectRead rd;
  rd.ranged = !range.empty();
  auto reopen = [&] { return ctx.store.Open(bucket, name); };
  auto h = Store::OpenReading(reopen(), reopen, [&](ObjectHandle& o) -> Status {
    if (precheck && *precheck) AIS_RETURN_IF_ERROR((*precheck)(o.meta()));
    ByteRange r{0, o.size()};
    if (rd.ranged) {
      auto parsed = ParseByteRange(range, o.size());
      if (!parsed.ok()) {
        if (unsatisfiable_size) *unsatisfiable_size = o.size();
        return parsed.status();
      }
      r = *parsed;
    }
    auto sliced = o.Slice(r.start, r.length);
    if (!sliced.ok()) return sliced.status();
    rd.start = r.start;
    rd.length = r.length;
    rd.segments = std::move(*sliced);
    return Status::OK();
  });
  if (!h.ok()) return h.status();
  if (!rd.ranged && !h->meta().cksum_value.empty()) {
    auto props = ctx.store.GetBucket(bucket);
    if (props.ok() && props->validate_warm_get) {
      Status verified = h->VerifyChecksum();
      if (verified.code() == Status::Code::kCorruption) {  // a mirrored object: another copy, if one is sound
        auto copy = ctx.store.OpenGoodCopy(bucket, name, *h);
        if (!copy.ok()) return verified;
        auto segs = copy->Slice(0, copy->size());
        if (!segs.ok()) return verified;
        rd.length = copy->size();
        rd.segments = std::move(*segs);
        h = std::move(copy);
      } else if (!verified.ok()) {
        return verified;
      }
    }
  }
  rd.handle = std::move(*h);
  return rd;
}

}  // namespace ais
