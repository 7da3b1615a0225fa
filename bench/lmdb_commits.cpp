// The peer of the write benchmark: raw LMDB with default sync, one commit (fsync) per write.
// Usage: cws-lmdb-commits DIR N  -> prints "commits/s <rate>"

#include <lmdb.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cws-lmdb-commits DIR N\n");
    return 2;
  }
  mkdir(argv[1], 0700);
  long n = std::atol(argv[2]);
  MDB_env* env = nullptr;
  mdb_env_create(&env);
  mdb_env_set_mapsize(env, size_t{1} << 30);
  if (mdb_env_open(env, argv[1], 0, 0600) != 0) {
    std::fprintf(stderr, "cannot open %s\n", argv[1]);
    return 1;
  }
  MDB_dbi dbi;
  MDB_txn* txn = nullptr;
  mdb_txn_begin(env, nullptr, 0, &txn);
  mdb_dbi_open(txn, nullptr, 0, &dbi);
  mdb_txn_commit(txn);
  std::string value(60, 'v'); // about a node record
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    auto key = "node" + std::to_string(i);
    MDB_val k{key.size(), key.data()};
    MDB_val v{value.size(), value.data()};
    mdb_txn_begin(env, nullptr, 0, &txn);
    mdb_put(txn, dbi, &k, &v, 0);
    if (mdb_txn_commit(txn) != 0) {
      return 1;
    }
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("commits/s %.0f\n", static_cast<double>(n) / s);
  mdb_env_close(env);
  return 0;
}
