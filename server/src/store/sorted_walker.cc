#include "store/sorted_walker.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "store/names.h"

namespace ais {

SortedWalker::SortedWalker(std::string objects_dir, std::string prefix, std::string after)
    : objects_dir_(std::move(objects_dir)), prefix_(std::move(prefix)), after_(std::move(after)) {}

Status SortedWalker::Push(const std::string& rel, const std::string& key_prefix) {
  std::string dir = objects_dir_ + "/" + rel;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::OK();  // vanished or never existed
    return Status::FromErrno(errno, "opendir " + dir);
  }
  Frame frame;
  frame.rel = rel;
  while (dirent* de = ::readdir(d)) {
    std::string disk = de->d_name;
    if (disk == "." || disk == "..") continue;
    bool is_dir = de->d_type == DT_DIR;
    if (de->d_type == DT_UNKNOWN) {
      struct stat st {};
      if (::stat((dir + disk).c_str(), &st) != 0) continue;
      is_dir = S_ISDIR(st.st_mode);
    }
    if (is_dir) {
      if (disk.empty() || disk.back() != kDirSuffix) continue;  // not ours
      std::string key = key_prefix + disk.substr(0, disk.size() - 1) + "/";
      bool in_prefix = key.starts_with(prefix_) || prefix_.starts_with(key);
      bool before = key < after_ && !after_.starts_with(key);
      if (in_prefix && !before) frame.items.push_back({std::move(key), std::move(disk), true});
    } else {
      std::string key = key_prefix + disk;
      if (key.starts_with(prefix_) && key > after_) frame.items.push_back({std::move(key), std::move(disk), false});
    }
  }
  ::closedir(d);
  std::sort(frame.items.begin(), frame.items.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  stack_.push_back(std::move(frame));
  return Status::OK();
}

Result<bool> SortedWalker::Next(std::string* name, std::string* path) {
  if (!started_) {
    started_ = true;
    std::string rel = PrefixRelDir(prefix_);
    if (!rel.empty()) rel.push_back('/');
    auto slash = prefix_.rfind('/');
    std::string key_prefix = slash == std::string::npos ? "" : prefix_.substr(0, slash + 1);
    AIS_RETURN_IF_ERROR(Push(rel, key_prefix));
  }
  while (!stack_.empty()) {
    Frame& top = stack_.back();
    if (top.pos == top.items.size()) {
      stack_.pop_back();
      continue;
    }
    Item item = std::move(top.items[top.pos++]);
    if (item.dir) {
      std::string rel = top.rel + item.disk + "/";
      AIS_RETURN_IF_ERROR(Push(rel, item.key));  // may invalidate `top`
      continue;
    }
    *path = objects_dir_ + "/" + top.rel + item.disk;
    *name = std::move(item.key);
    return true;
  }
  return false;
}

}  // namespace ais
