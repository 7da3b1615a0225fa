// Large listings are streamed in pages (chunked) and read exactly as the whole answer would:
// a daemon with page_objects = 3 answers an HTTP/1.0 request (no chunking: the answer is
// built whole) and an HTTP/1.1 request (paged) with the same body.

#include <gtest/gtest.h>

#include <fstream>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using cws::test::run_tool;

class paging_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app} << "page_objects = 3\n";
    auto r = run_tool(d_->home(), "mkdef -t group rack1 mgt=kvm os=rhels9");
    ASSERT_EQ(r.rc, 0) << r.out;
    r = run_tool(d_->home(), "mkdef 'cn[01-10]' groups=rack1,all vmmemory=4096");
    ASSERT_EQ(r.rc, 0) << r.out;
    d_->start();
  }

  static void TearDownTestSuite() {
    EXPECT_EQ(d_->stop(), 0);
    delete d_;
    delete dir_;
  }

  /// Status line, headers and body of a GET sent as `version` ("1.0" or "1.1").
  struct raw_reply {
    std::string head;
    std::string body;
  };

  raw_reply get_as(const std::string& version, const std::string& path,
                   const std::string& extra = {}) {
    auto target = d_->url(path, extra);
    auto text = client.exchange("GET " + target + " HTTP/" + version
                                + "\r\nHost: x\r\nConnection: close\r\n\r\n");
    auto split = text.find("\r\n\r\n");
    if (split == std::string::npos) {
      return {text, {}};
    }
    return {text.substr(0, split), text.substr(split + 4)};
  }

  /// The body of a chunked answer, its chunks joined.
  static std::string dechunk(const std::string& chunked) {
    std::string out;
    size_t pos = 0;
    while (pos < chunked.size()) {
      auto eol = chunked.find("\r\n", pos);
      auto size = std::stoul(chunked.substr(pos, eol - pos), nullptr, 16);
      if (size == 0) {
        return out;
      }
      out += chunked.substr(eol + 2, size);
      pos = eol + 2 + size + 2;
    }
    ADD_FAILURE() << "no last chunk: the stream was cut";
    return out;
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* paging_test::dir_ = nullptr;
cws::test::daemon* paging_test::d_ = nullptr;

TEST_F(paging_test, a_paged_listing_reads_as_the_whole_one) {
  for (std::string extra : {"", "&pretty=1"}) {
    for (std::string path : {"/nodes/all", "/nodes/cn[01-10]/attrs/os,vmmemory,arch"}) {
      auto whole = get_as("1.0", path, extra);
      auto paged = get_as("1.1", path, extra);
      ASSERT_EQ(whole.head.rfind("HTTP/1.0 200", 0), 0u) << whole.head;
      ASSERT_EQ(paged.head.rfind("HTTP/1.1 200", 0), 0u) << paged.head;
      EXPECT_EQ(whole.head.find("chunked"), std::string::npos) << whole.head;
      EXPECT_NE(paged.head.find("Transfer-Encoding: chunked"), std::string::npos) << paged.head;
      auto body = dechunk(paged.body);
      EXPECT_EQ(body, whole.body) << path << extra;
      // every node, in name order, once
      EXPECT_NE(body.find("\"cn01\""), std::string::npos);
      EXPECT_LT(body.find("\"cn09\""), body.find("\"cn10\""));
      EXPECT_EQ(body.find("\"cn05\""), body.rfind("\"cn05\""));
    }
  }
  // what a client library sees (Beast's parser, keep-alive): the same JSON
  auto r = client.get(d_->url("/nodes/cn[01-10]/attrs/os"));
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, get_as("1.0", "/nodes/cn[01-10]/attrs/os").body);
  EXPECT_EQ(client.get(d_->url("/nodes/cn01")).status, 200u); // the connection still works
}

TEST_F(paging_test, a_missing_object_fails_the_whole_listing_before_anything_is_sent) {
  auto r = get_as("1.1", "/nodes/cn[01-10],ghost");
  EXPECT_EQ(r.head.rfind("HTTP/1.1 403", 0), 0u) << r.head;
  EXPECT_EQ(r.head.find("chunked"), std::string::npos) << r.head;
  EXPECT_NE(r.body.find("Could not find an object named 'ghost' of type 'node'"), std::string::npos)
    << r.body;
  r = get_as("1.1", "/nodes/cn[01-10]/attrs/os,nosuchattr");
  EXPECT_EQ(r.head.rfind("HTTP/1.1 403", 0), 0u) << r.head;
  EXPECT_EQ(r.head.find("chunked"), std::string::npos) << r.head;
}

TEST_F(paging_test, small_listings_and_xcoll_are_answered_whole) {
  auto r = get_as("1.1", "/nodes/cn[01-03]");
  EXPECT_EQ(r.head.find("chunked"), std::string::npos) << r.head;
  EXPECT_NE(r.head.find("Content-Length"), std::string::npos) << r.head;
  r = get_as("1.1", "/nodes/all/attrs/os", "&xcoll=1");
  EXPECT_EQ(r.head.find("chunked"), std::string::npos) << r.head;
  EXPECT_NE(r.body.find("\"cn01,cn02,cn03,cn04,cn05,cn06,cn07,cn08,cn09,cn10\""), std::string::npos)
    << r.body;
}

} // namespace
