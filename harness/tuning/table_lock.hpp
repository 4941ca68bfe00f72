// `check-table --lock` / `--verify-lock`: a deployed table set pinned to what was reviewed. A lock records, in set
// order, each table's path (as given), the SHA-256 of its bytes and its row count (tagged rows included), and the
// kernel library version the set was measured with. Verification fails closed: every difference is named (docs/
// tuning.md "Locks").
#pragma once
#include <string>
#include <vector>

#include "harness/tuning/table_set.hpp"

namespace moe {

struct LockedTable {
  std::string path, sha256;
  long long rows = 0;
};

struct TableLock {
  std::string library_version;
  std::vector<LockedTable> tables;
};

// The lock of the set's files as they are now (each file's bytes read again, hashed; rows as read).
TableLock lock_of(const TableSet& s, const std::string& library_version);
void write_lock(const TableLock& lock, const std::string& path);  // JSON, atomically
// Bad input (exit 2) naming the file and the key for a lock that is not one.
TableLock read_lock(const std::string& path);
// One sentence per drift between the locked and the present state: the library version, the table list, each
// table's SHA-256 and row count. Empty: nothing drifted.
std::vector<std::string> lock_drift(const TableLock& locked, const TableLock& now);

// The kernel library version a set is measured with: `given` (--library-version) when not empty; else the version
// this build's kernels report for the kernel ids the set's rows name ("host-contract 1"). An AITER table carries no
// version of ours: without `given` that is bad input (exit 2).
std::string library_version_of(const TableSet& s, const std::string& given, double host_budget);

}  // namespace moe
