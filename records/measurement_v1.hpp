// records/measurement_v1.hpp — reading version 1 measurement records. Version 1 kept part of a
// record's meaning only in its reproducing command line (who trained, the warm-up and timed
// steps, the bucket size, the network file); version 2 has typed fields for them. This is the one
// place dnntune still parses a saved command line: once, when a v1 record is read, into those
// fields, so that no reader depends on how a flag was spelled then.
#pragma once

#include "records/measurement.hpp"

namespace dnntune::records {

// Fills the version 2 fields of a record read from a version 1 line out of its `command`:
// network_source from --model; for a `dnntune train` record (kind network or module) the trainer
// (--runner, kCppTrainer when absent or cut short), warmup_steps (--warmup), steps (--iters) and
// bucket_megabytes (--bucket-mb, train's default when absent, as train left it out then); the
// precision is default_precision(backend) (torch-cuda ran TF32 then too), the memory format
// contiguous. A number the command does not hold reads 0.
void migrate_v1_record(Measurement& record);

}  // namespace dnntune::records
