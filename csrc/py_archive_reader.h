// aistore._native.ArchiveReader: a Python iterator over the regular files of an archive stream
// (ArchiveReader over a PyByteSource), with ArchiveFormatError and TruncatedArchiveError.
#pragma once

#include <Python.h>

namespace aisnative {

// Adds ArchiveReader, ArchiveMember and the two exception types to `module`; false with a
// Python error set on failure.
bool AddArchiveReaderTypes(PyObject* module);

}  // namespace aisnative
