// That a run journal's records belong to the run its start line describes, checked before `report DIR` counts them
// and before `run --resume DIR` keeps them: each record's kernel is one of the run's kernels (provenance.kernels),
// its case is one of the run's suite's cases (when the suite file is still the one the run read: its digest is
// provenance.suite_hash), and no (kernel, case) is recorded under two slots. A record of another run (another kernel,
// another suite's case) would otherwise stand in for a test that was never judged.
#pragma once
#include "harness/isolation/journal.hpp"

namespace moe {

// Bad input (exit 2) naming the journal line, the key and the foreign record.
void check_journal_records(const Journal& j);

}  // namespace moe
