#include "store/object_writer.h"

#include <fcntl.h>

#include <algorithm>

#include "store/bck.h"
#include "util/clock.h"
#include "util/strings.h"

namespace ais {

ObjectWriter::ObjectWriter(Committer* commit, Volume* volume, const BucketRegistry* buckets, std::string bucket,
                           std::string name, BucketProps props, PutOptions opts)
    : commit_(commit),
      volume_(volume),
      buckets_(buckets),
      bucket_(std::move(bucket)),
      name_(std::move(name)),
      props_(std::move(props)),
      opts_(std::move(opts)) {}

ObjectWriter::~ObjectWriter() {
  if (!done_) (void)Abort();
}

Status ObjectWriter::Init() {
  const Mountpaths& mps = volume_->mountpaths();
  primary_mp_ = mps.PrimaryFor(bucket_, name_);
  meta_.name = name_;
  meta_.custom = opts_.custom;
  std::sort(meta_.custom.begin(), meta_.custom.end());
  auto ck = Checksummer::Create(props_.checksum_type);
  if (!ck.ok()) return ck.status();
  cksum_ = std::move(*ck);
  if (cksum_) meta_.cksum_type = props_.checksum_type;
  if (cksum_ && !opts_.client_cksum_type.empty() && !opts_.client_cksum_value.empty() &&
      !Checksummer::SameDigest(opts_.client_cksum_type, props_.checksum_type)) {
    auto cc = Checksummer::Create(opts_.client_cksum_type);
    if (!cc.ok()) return cc.status();
    client_cksum_ = std::move(*cc);
  }
  if (opts_.force_chunk_size) {
    chunk_size_ = *opts_.force_chunk_size;
  } else if (opts_.size && props_.ShouldChunk(*opts_.size)) {
    chunk_size_ = props_.effective_chunk_size();
  }
  if (chunk_size_ > 0 && opts_.size) {
    chunk_size_ = std::max(chunk_size_, (*opts_.size + kMaxChunks - 1) / kMaxChunks);  // at most 9999 chunks
  }
  if (chunk_size_ > 0) meta_.upload_id = RandomId(16);
  if (chunk_size_ == 0 && opts_.size && *opts_.size <= kBufferedMax) {
    if (!mps.enabled(primary_mp_)) return Status::IOError("no mountpaths available (all disabled)");
    buffering_ = true;
    buffered_.reserve(*opts_.size);
    return Status::OK();
  }
  if (chunk_size_ == 0) return OnPrimary([this] { return OpenTemp(); });
  return OnPrimary([this] { return commit_->WriteChunkMarker(primary_mp_, bucket_, name_, meta_.upload_id); });
}

Status ObjectWriter::OnPrimary(const std::function<Status()>& open) {
  const Mountpaths& mps = volume_->mountpaths();
  // Nothing is on primary_mp_ yet: if it stopped taking new data since Init (a detach began),
  // the object goes where placement puts it now.
  if (!mps.placeable(primary_mp_) && mps.num_placeable() > 0) primary_mp_ = mps.PrimaryFor(bucket_, name_);
  for (int attempt = 0;; ++attempt) {
    if (!mps.enabled(primary_mp_)) return Status::IOError("no mountpaths available (all disabled)");
    Status st = open();
    if (st.ok() || attempt > 0 || st.code() == Status::Code::kNoSpace || volume_->Check(primary_mp_)) {
      return st;
    }
    primary_mp_ = mps.PrimaryFor(bucket_, name_);
  }
}

Status ObjectWriter::Unbuffer() {
  AIS_RETURN_IF_ERROR(OnPrimary([this] { return OpenTemp(); }));
  buffering_ = false;
  Status st = PwriteAll(fd_.get(), buffered_.data(), buffered_.size(), data_offset_);
  std::string().swap(buffered_);
  return st.ok() ? st : CheckedWriteError(st);
}

Status ObjectWriter::OpenTemp() {
  temp_path_ = commit_->TempPath(primary_mp_);
  auto fd = OpenFile(temp_path_, O_WRONLY | O_CREAT | O_EXCL);
  if (!fd.ok()) {
    temp_path_.clear();
    return fd.status();
  }
  fd_ = std::move(*fd);
  fd_mp_ = primary_mp_;
  data_offset_ = ReservedDataOffset(meta_);  // Write() puts the bytes after it (pwrite)
  return Status::OK();
}

Status ObjectWriter::OpenNextChunk() {
  const Mountpaths& mps = volume_->mountpaths();
  if (fd_.valid() && commit_->fsync()) AIS_RETURN_IF_ERROR(FsyncFd(fd_.get(), "chunk"));
  auto num = static_cast<uint32_t>(meta_.chunk_sizes.size() + 1);
  if (num > kMaxChunks) return Status::InvalidArgument("object exceeds 9999 chunks");
  // A mirrored object keeps its chunks with its object file: a copy then stands in for all of it
  // when any one disk is lost (spread over every disk, the chunks would die with each of them).
  size_t mp = props_.copies() > 1 && mps.placeable(primary_mp_) ? primary_mp_ : mps.ForChunk(meta_.upload_id, num);
  Result<UniqueFd> fd = Status::OK();
  for (int attempt = 0;; ++attempt) {
    Status st = commit_->MakeChunkDir(mp, bucket_, meta_.upload_id);
    if (st.ok()) {
      fd = OpenFile(mps.ChunkPath(mp, bucket_, meta_.upload_id, num), O_WRONLY | O_CREAT | O_TRUNC);
      st = fd.status();
    }
    if (st.ok()) break;
    if (attempt > 0 || st.code() == Status::Code::kNoSpace || !buckets_->Get(bucket_) ||
        volume_->Check(mp)) {
      return st;
    }
    mp = mps.ForChunk(meta_.upload_id, num);  // the health check disabled it: the next one
  }
  fd_ = std::move(*fd);
  fd_mp_ = mp;
  chunk_mps_.push_back(mp);
  meta_.chunk_sizes.push_back(0);
  chunk_fill_ = 0;
  return Status::OK();
}

Status ObjectWriter::Write(const void* data, size_t len) {
  if (done_) return Status::IOError("write after commit or abort");
  if (opts_.size && written_ + len > *opts_.size) return Status::InvalidArgument("body exceeds Content-Length");
  if (cksum_) cksum_->Update(data, len);
  if (client_cksum_) client_cksum_->Update(data, len);
  if (buffering_) {
    buffered_.append(static_cast<const char*>(data), len);
    written_ += len;
    return Status::OK();
  }
  if (chunk_size_ == 0) {
    Status st = PwriteAll(fd_.get(), data, len, data_offset_ + written_);
    if (!st.ok()) return CheckedWriteError(st);
    written_ += len;
    return Status::OK();
  }
  auto* p = static_cast<const char*>(data);
  while (len > 0) {
    if (!fd_.valid() || chunk_fill_ == chunk_size_) {
      Status st = OpenNextChunk();
      if (!st.ok()) {
        (void)Abort();
        return st;
      }
    }
    size_t n = static_cast<size_t>(std::min<uint64_t>(len, chunk_size_ - chunk_fill_));
    Status st = WriteAll(fd_.get(), p, n);
    if (!st.ok()) return CheckedWriteError(st);
    chunk_fill_ += n;
    meta_.chunk_sizes.back() += n;
    written_ += n;
    p += n;
    len -= n;
  }
  return Status::OK();
}

Status ObjectWriter::CheckedWriteError(Status st) {
  if (st.code() == Status::Code::kIOError) (void)volume_->Check(fd_mp_);
  (void)Abort();  // nothing partial stays behind, even before the writer is destroyed
  return st;
}

Status ObjectWriter::Commit(ObjectMeta* meta) {
  if (done_) return Status::IOError("commit after commit or abort");
  Status st;
  if (opts_.size && written_ != *opts_.size) {
    st = Status::InvalidArgument("received " + std::to_string(written_) + " of " + std::to_string(*opts_.size) +
                                 " bytes");
  }
  meta_.size = written_;
  if (st.ok() && cksum_) {
    meta_.cksum_value = cksum_->FinishHex();
    if (!opts_.client_cksum_value.empty() && !opts_.client_cksum_type.empty()) {
      std::string got = client_cksum_ ? client_cksum_->FinishHex() : meta_.cksum_value;
      if (got != opts_.client_cksum_value) {
        std::string msg = "BAD DATA CHECKSUM: " + ObjectCname(bucket_, name_) + ": " + opts_.client_cksum_type +
                          "(" + got + ") != " + opts_.client_cksum_type + "(" + opts_.client_cksum_value + ")";
        st = opts_.cksum_from_store ? Status::Corruption(std::move(msg)) : Status::InvalidArgument(std::move(msg));
      }
    }
  }
  meta_.atime_ns = opts_.expect ? opts_.expect->atime_ns : NowNs();
  if (st.ok() && buffering_) {
    // The header's space, as OpenTemp reserves it: the same layout as a streamed object's.
    st = OnPrimary([this] { return OpenTemp(); });
    if (st.ok()) {
      st = commit_->CommitFile(bucket_, primary_mp_, temp_path_, fd_.get(), true, data_offset_, &meta_, opts_.expect,
                              buffered_);
    }
    if (st.ok()) temp_path_.clear();  // renamed into place
    if (st.code() == Status::Code::kIOError) (void)volume_->Check(primary_mp_);
  } else if (st.ok() && chunk_size_ == 0) {
    st = commit_->CommitFile(bucket_, primary_mp_, temp_path_, fd_.get(), true, data_offset_, &meta_, opts_.expect);
    if (st.ok()) temp_path_.clear();  // renamed into place
  } else if (st.ok()) {
    if (fd_.valid() && commit_->fsync()) st = FsyncFd(fd_.get(), "chunk");
    fd_.reset();
    if (st.ok()) st = commit_->CommitChunked(bucket_, primary_mp_, &meta_, opts_.expect);
    if (st.ok()) {
      commit_->ForgetChunkMarker(primary_mp_, meta_.upload_id);
    }
  }
  if (!st.ok()) {
    (void)Abort();
    return st;
  }
  done_ = true;
  fd_.reset();
  *meta = meta_;
  return Status::OK();
}

void ObjectWriter::MergeCustom(const std::vector<std::pair<std::string, std::string>>& md) {
  MergeCustomInto(&meta_.custom, md);
}

Status ObjectWriter::OpenWritten(std::vector<UniqueFd>* fds, std::vector<FileSegment>* segs) {
  if (done_) return Status::IOError("read-back after commit or abort");
  if (buffering_) AIS_RETURN_IF_ERROR(Unbuffer());
  const Mountpaths& mps = volume_->mountpaths();
  auto open = [&](const std::string& path, uint64_t offset, uint64_t len) -> Status {
    auto fd = OpenFile(path, O_RDONLY);
    if (!fd.ok()) return fd.status();
    segs->push_back({fd->get(), offset, len});
    fds->push_back(std::move(*fd));
    return Status::OK();
  };
  if (chunk_size_ == 0) return open(temp_path_, data_offset_, written_);
  for (size_t k = 0; k < meta_.chunk_sizes.size(); ++k) {
    auto num = static_cast<uint32_t>(k + 1);
    AIS_RETURN_IF_ERROR(open(mps.ChunkPath(chunk_mps_[k], bucket_, meta_.upload_id, num), 0, meta_.chunk_sizes[k]));
  }
  return Status::OK();
}

Status ObjectWriter::Abort() {
  done_ = true;
  fd_.reset();
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  if (!meta_.upload_id.empty()) commit_->DropChunks(primary_mp_, bucket_, meta_.upload_id);
  return Status::OK();
}

Status CommitThrough(ObjectWriter& w, ObjectMeta* out, const WriteThroughFn& through) {
  if (through) {
    std::vector<UniqueFd> fds;
    std::vector<FileSegment> segs;
    AIS_RETURN_IF_ERROR(w.OpenWritten(&fds, &segs));
    auto md = through(segs, w.written());
    if (!md.ok()) return md.status();
    w.MergeCustom(*md);
  }
  return w.Commit(out);
}

}  // namespace ais
