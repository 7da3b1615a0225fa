// makedns' DNS UPDATE encoding, TSIG signing and the reading of answers (api/dns_message),
// without a server: golden bytes, a signed answer made here as RFC 8945 says a server signs
// it, and malformed answers.

#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdio>
#include <memory>

#include "api/dns_message.hpp"

namespace {

using namespace cws::api::dns;

std::string wire(std::string_view name) {
  std::string out;
  EXPECT_TRUE(encode_name(name, out, true));
  return out;
}

void put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

/// The answer a server sends to `request` (unsigned part) with rcode `rcode`, signed with
/// `key` at `time` as RFC 8945 4.3 says: request MAC, answer, TSIG variables.
std::string signed_answer(const std::string& request, const std::string& request_mac,
                          const tsig_key& key, uint64_t time, unsigned rcode, unsigned error = 0) {
  // the answer: the request's header and zone section, QR set, no update section
  std::string ans = request.substr(0, 12);
  ans[2] = static_cast<char>(ans[2] | 0x80);
  ans[3] = static_cast<char>(rcode);
  ans[8] = ans[9] = ans[10] = ans[11] = 0;
  size_t zone_end = 12;
  while (request[zone_end] != 0) {
    zone_end += 1 + static_cast<uint8_t>(request[zone_end]);
  }
  ans += request.substr(12, zone_end + 1 + 4 - 12);
  std::string vars = wire(key.name);
  put16(vars, 255);
  put16(vars, 0);
  put16(vars, 0);
  vars += wire("hmac-sha256");
  std::string timefields;
  put16(timefields, static_cast<uint16_t>(time >> 32));
  put16(timefields, static_cast<uint16_t>((time >> 16) & 0xffff));
  put16(timefields, static_cast<uint16_t>(time & 0xffff));
  put16(timefields, 300);
  vars += timefields;
  put16(vars, static_cast<uint16_t>(error));
  put16(vars, 0);
  std::string covered;
  put16(covered, static_cast<uint16_t>(request_mac.size()));
  covered += request_mac + ans + vars;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  HMAC(EVP_sha256(), key.secret.data(), static_cast<int>(key.secret.size()),
       reinterpret_cast<const unsigned char*>(covered.data()), covered.size(), mac, &len);
  std::string rdata = wire("hmac-sha256") + timefields;
  put16(rdata, static_cast<uint16_t>(len));
  rdata.append(reinterpret_cast<char*>(mac), len);
  rdata += ans.substr(0, 2);
  put16(rdata, static_cast<uint16_t>(error));
  put16(rdata, 0);
  std::string out = ans;
  out[11] = 1;
  out += wire(key.name);
  put16(out, 250);
  put16(out, 255);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint16_t>(rdata.size()));
  return out + rdata;
}

const tsig_key key{"xcat_key", std::string(32, '\x42')};

std::string request(std::string& mac, uint64_t time) {
  std::string msg, error;
  EXPECT_TRUE(
    encode_update(0x4242, "cluster.test",
                  {{change::kind::delete_rrset, {"n1.cluster.test.", rtype::a, ""}, 0},
                   {change::kind::add, {"n1.cluster.test.", rtype::a, "10.0.0.1"}, 86400}},
                  msg, error))
    << error;
  sign(msg, key, time, mac);
  return msg;
}

TEST(dns_message, an_update_is_encoded_as_rfc_2136_says) {
  std::string msg, error;
  ASSERT_TRUE(
    encode_update(7, "c.t",
                  {{change::kind::delete_rrset, {"a.c.t.", rtype::a, ""}, 0},
                   {change::kind::add, {"a.c.t.", rtype::a, "10.0.0.1"}, 86400},
                   {change::kind::add, {"1.0.0.10.in-addr.arpa.", rtype::ptr, "a.c.t."}, 60}},
                  msg, error));
  std::string expected{"\x00\x07\x28\x00\x00\x01\x00\x00\x00\x03\x00\x00" // id, UPDATE, counts
                       "\x01"
                       "c\x01t\x00\x00\x06\x00\x01" // zone c.t SOA IN
                       "\x01"
                       "a\x01"
                       "c\x01t\x00\x00\x01\x00\xff\x00\x00\x00\x00\x00\x00" // delete RRset
                       "\x01"
                       "a\x01"
                       "c\x01t\x00\x00\x01\x00\x01\x00\x01\x51\x80\x00\x04\x0a\x00\x00\x01",
                       59};
  EXPECT_EQ(msg.substr(0, expected.size()), expected);
  EXPECT_EQ(describe({change::kind::add, {"a.c.t.", rtype::a, "10.0.0.1"}, 86400}),
            "add a.c.t. 86400 IN A 10.0.0.1");
  EXPECT_EQ(describe({change::kind::delete_rrset, {"a.c.t.", rtype::cname, ""}, 0}),
            "delete a.c.t. CNAME");
  // what cannot be encoded is refused, never sent cut
  EXPECT_FALSE(encode_update(1, "c.t", {{change::kind::add, {"a..c.t.", rtype::a, "10.0.0.1"}, 1}},
                             msg, error));
  EXPECT_FALSE(encode_update(1, "c.t", {{change::kind::add, {"a.c.t.", rtype::a, "10.0.0.256"}, 1}},
                             msg, error));
  EXPECT_NE(error.find("10.0.0.256"), std::string::npos);
}

TEST(dns_message, names_keep_to_rfc_1035_lengths) {
  std::string out;
  EXPECT_TRUE(encode_name(std::string(63, 'a') + ".b", out));
  EXPECT_FALSE(encode_name(std::string(64, 'a') + ".b", out));
  std::string long_name;
  for (int i = 0; i < 64; ++i) {
    long_name += "abc.";
  }
  EXPECT_FALSE(encode_name(long_name, out)); // 257 bytes in wire form
  EXPECT_FALSE(encode_name("a..b", out));
  out.clear();
  EXPECT_TRUE(encode_name("A.B.", out, true));
  EXPECT_EQ(out, std::string("\x01"
                             "a\x01"
                             "b\x00",
                             5));
}

TEST(dns_message, a_signed_answer_verifies_and_any_change_to_it_does_not) {
  std::string mac;
  auto req = request(mac, 1800000000);
  EXPECT_EQ(mac.size(), 32u);
  EXPECT_EQ(static_cast<uint8_t>(req[11]), 1); // the TSIG record is counted
  auto ans = signed_answer(req.substr(0, req.size()), mac, key, 1800000001, 0);
  answer a;
  ASSERT_EQ(read_answer(ans, key, mac, 1800000000, a), "");
  EXPECT_TRUE(a.signed_);
  EXPECT_TRUE(a.signature_ok);
  EXPECT_EQ(a.rcode, 0u);
  EXPECT_EQ(a.id, 0x4242);
  // a flipped bit of the answer, another key, another request, a clock beyond the fudge
  auto bent = ans;
  bent[3] = 5;
  ASSERT_EQ(read_answer(bent, key, mac, 1800000000, a), "");
  EXPECT_FALSE(a.signature_ok);
  EXPECT_EQ(rcode_name(a.rcode), "REFUSED");
  ASSERT_EQ(read_answer(ans, tsig_key{"xcat_key", std::string(32, 'x')}, mac, 1800000000, a), "");
  EXPECT_FALSE(a.signature_ok);
  ASSERT_EQ(read_answer(ans, key, std::string(32, 'm'), 1800000000, a), "");
  EXPECT_FALSE(a.signature_ok);
  ASSERT_EQ(read_answer(ans, key, mac, 1800000000 + 1000, a), "");
  EXPECT_FALSE(a.signature_ok);
  // a server's refusal of the signature: its error, no MAC
  auto badsig = signed_answer(req, mac, key, 1800000000, 9, 16);
  ASSERT_EQ(read_answer(badsig, key, mac, 1800000000, a), "");
  EXPECT_EQ(rcode_name(a.rcode), "NOTAUTH");
  EXPECT_EQ(rcode_name(a.tsig_error), "BADSIG");
}

TEST(dns_message, malformed_answers_are_refused_at_every_length) {
  std::string mac;
  auto req = request(mac, 1800000000);
  auto ans = signed_answer(req, mac, key, 1800000000, 0);
  answer a;
  for (size_t n = 0; n < ans.size(); ++n) {
    EXPECT_NE(read_answer(ans.substr(0, n), key, mac, 1800000000, a), "") << n;
    EXPECT_FALSE(a.signature_ok) << n;
  }
  EXPECT_NE(read_answer(ans + "x", key, mac, 1800000000, a), "");
  // a compression pointer that points forward (or at itself) cannot loop
  std::string loop = ans.substr(0, 12);
  loop[5] = 1; // one zone entry
  loop[11] = 0;
  loop += std::string("\xc0\x0c\x00\x06\x00\x01", 6);
  EXPECT_NE(read_answer(loop, key, mac, 1800000000, a), "");
  // a request (QR clear) is not an answer
  EXPECT_NE(read_answer(req, key, mac, 1800000000, a), "");
  EXPECT_NE(read_answer(std::string(max_message_bytes + 1, '\0'), key, mac, 0, a), "");
}

TEST(dns_message, key_files_of_tsig_keygen_are_read_and_new_ones_are_alike) {
  tsig_key k;
  auto made = new_key_file("xcat_key");
  ASSERT_EQ(parse_key_file(made, k), "");
  EXPECT_EQ(k.name, "xcat_key");
  EXPECT_EQ(k.secret.size(), 32u);
  EXPECT_NE(new_key_file("xcat_key"), made); // a new random secret each time
  // bind's own tool writes the same form
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen("tsig-keygen -a hmac-sha256 site_key", "r"),
                                          pclose);
  ASSERT_TRUE(p);
  std::string text;
  char buf[256];
  while (size_t n = fread(buf, 1, sizeof buf, p.get())) {
    text.append(buf, n);
  }
  ASSERT_EQ(parse_key_file(text, k), "") << text;
  EXPECT_EQ(k.name, "site_key");
  EXPECT_EQ(k.secret.size(), 32u);
  EXPECT_NE(parse_key_file("key \"k\" { algorithm hmac-md5; secret \"AAAA\"; };", k), "");
  EXPECT_NE(parse_key_file("key \"k\" { algorithm hmac-sha256; secret \"!!!\"; };", k), "");
  EXPECT_NE(parse_key_file("key \"k\" { algorithm hmac-sha256; secret \"====\"; };", k), "");
  EXPECT_NE(parse_key_file("", k), "");
}

} // namespace
