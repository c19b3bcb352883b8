// The sink of a download through an ETL (AIS dload `etl_name`): the file is spooled to an
// unlinked temporary file as it arrives, then sent whole through the running transformer, whose
// reply becomes the object, committed whole or not at all. The transformer gets the bytes (hpush
// PUT, ws message), never a name to read back: the fetched file is not an object of the store.
#pragma once

#include <memory>
#include <string>

#include "download/link_fetch.h"
#include "etl/etl_manager.h"
#include "store/store.h"

namespace ais {

// `spool_dir`: where the file waits (a mountpath's work directory); `through`: a remote
// bucket's write-through (ObjectSink). REQUIRES: `etl` is an hpush or ws ETL (hpull names an
// object for the transformer to GET: there is none here).
std::unique_ptr<FetchSink> EtlSink(Store& store, std::string bucket, std::string name, std::string spool_dir,
                                   std::shared_ptr<etl::RunningEtl> etl, std::string etl_args,
                                   WriteThroughFn through = {});

}  // namespace ais
