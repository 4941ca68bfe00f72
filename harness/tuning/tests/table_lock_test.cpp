// SHA-256 against the FIPS 180-2 test vectors, and table locks: every drift (a table's bytes, its row count, the
// library version, the table list) named, none when nothing changed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fixtures/error.hpp"
#include "harness/tuning/sha256.hpp"
#include "harness/tuning/table_lock.hpp"

namespace moe {
namespace {

namespace fs = std::filesystem;

TEST(Sha256, FipsTestVectors) {
  // FIPS 180-2, appendix B (one block, two blocks, a million 'a'), and the empty message.
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

const char* kHeader =
    "gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,"
    "doweight_stage1,block_m,ksplit,us,kernelName1,err1,_tag";

std::string row(int cu, int token, const std::string& us, const std::string& tag = "") {
  return "gfx942," + std::to_string(cu) + "," + std::to_string(token) +
         ",2048,128,256,8,silu,bf16,fp8,fp8,per_token,1,0,32,0," + us + ",k,0.1%," + tag;
}

struct Files {
  fs::path dir = fs::temp_directory_path() / ("moe_table_lock_test_" + std::to_string(::getpid()));
  std::string stock = (dir / "stock.csv").string(), overlay = (dir / "overlay.csv").string();
  Files() {
    fs::create_directories(dir);
    std::ofstream(stock) << kHeader << "\n" << row(0, 1, "5") << "\n" << row(0, 16, "6") << "\n"
                         << row(0, 16, "7", "untuned") << "\n";
    std::ofstream(overlay) << kHeader << "\n" << row(80, 1, "4") << "\n";
  }
  ~Files() { fs::remove_all(dir); }
};

bool mentions(const std::vector<std::string>& drift, const std::string& text) {
  for (const std::string& d : drift)
    if (d.find(text) != std::string::npos) return true;
  return false;
}

TEST(TableLock, RecordsEachTableAndVerifiesUnchanged) {
  Files f;
  const TableLock lock = lock_of(read_table_set({f.stock, f.overlay}), "aiter 0.1.5");
  ASSERT_EQ(lock.tables.size(), 2u);
  EXPECT_EQ(lock.tables[0].path, f.stock);
  EXPECT_EQ(lock.tables[0].rows, 3);  // the tagged row counts: it is in the file
  EXPECT_EQ(lock.tables[1].rows, 1);
  std::ifstream in(f.overlay, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(lock.tables[1].sha256, sha256_hex(bytes));
  const std::string path = (f.dir / "lock.json").string();
  write_lock(lock, path);
  const TableLock back = read_lock(path);
  EXPECT_TRUE(lock_drift(back, lock_of(read_table_set({f.stock, f.overlay}), "aiter 0.1.5")).empty());
}

TEST(TableLock, DriftInHashVersionRowCountAndListIsNamed) {
  Files f;
  const TableLock lock = lock_of(read_table_set({f.stock, f.overlay}), "aiter 0.1.5");
  // The library upgraded.
  auto d = lock_drift(lock, lock_of(read_table_set({f.stock, f.overlay}), "aiter 0.1.6"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(mentions(d, "kernel library version: locked 'aiter 0.1.5', now 'aiter 0.1.6'"));
  // A value edited in place: the hash drifts, the row count does not.
  std::ofstream(f.overlay) << kHeader << "\n" << row(80, 1, "3") << "\n";
  d = lock_drift(lock, lock_of(read_table_set({f.stock, f.overlay}), "aiter 0.1.5"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(mentions(d, f.overlay + ": sha256 locked " + lock.tables[1].sha256));
  // A row added upstream to the stock table: its hash and its row count.
  std::ofstream(f.stock, std::ios::app) << row(0, 32, "8") << "\n";
  d = lock_drift(lock, lock_of(read_table_set({f.stock, f.overlay}), "aiter 0.1.5"));
  EXPECT_TRUE(mentions(d, f.stock + ": row count locked 3, now 4"));
  EXPECT_TRUE(mentions(d, f.stock + ": sha256 locked"));
  EXPECT_EQ(d.size(), 3u);  // stock hash and count, overlay hash
  // The set lost its overlay.
  d = lock_drift(lock, lock_of(read_table_set({f.stock}), "aiter 0.1.5"));
  EXPECT_TRUE(mentions(d, "table list: locked [" + f.stock + ", " + f.overlay + "], now [" + f.stock + "]"));
}

TEST(TableLock, MalformedLocksAndUnversionedAiterSetsAreBadInput) {
  Files f;
  const std::string path = (f.dir / "bad.json").string();
  std::ofstream(path) << R"({"library_version": "x", "tables": [{"path": "a.csv"}]})";
  try {
    read_lock(path);
    FAIL() << "a lock without sha256 was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
  // An AITER table says nothing of its library's version: it must be given.
  EXPECT_THROW(library_version_of(read_table_set({f.stock}), "", 0), Error);
  EXPECT_EQ(library_version_of(read_table_set({f.stock}), "aiter 0.1.5", 0), "aiter 0.1.5");
}

}  // namespace
}  // namespace moe
