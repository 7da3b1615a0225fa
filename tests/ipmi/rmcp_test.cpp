// The RMCP+ codec alone: messages built and read back, codes checked, tampering refused.

#include <gtest/gtest.h>

#include "ipmi/chassis.hpp"
#include "ipmi/rmcp.hpp"

namespace {

using namespace cws::ipmi;

handshake sample() {
  handshake h;
  h.console_sid = 0x11223344;
  h.bmc_sid = 0x55667788;
  for (uint8_t i = 0; i < 16; ++i) {
    h.console_rand[i] = i;
    h.bmc_rand[i] = static_cast<uint8_t>(0x80 + i);
    h.bmc_guid[i] = static_cast<uint8_t>(0x40 + i);
  }
  h.user = "admin";
  h.password = "secret";
  return h;
}

TEST(rmcp, request_has_checksums_and_parses_as_response_when_turned_around) {
  auto b = encode_request(request{0x00, 0x01, {}}, 5);
  ASSERT_EQ(b.size(), 7u);
  EXPECT_EQ(b[0], 0x20);
  EXPECT_EQ(static_cast<uint8_t>(b[0] + b[1] + b[2]), 0); // header checksum
  EXPECT_EQ(b[4] >> 2, 5);
  // the BMC's answer: rqAddr, netfn+1, chk, rsAddr, seq, cmd, cc, data, chk
  std::vector<uint8_t> r{0x81, 0x04, 0, 0x20, 5 << 2, 0x01, 0x00, 0x01, 0x00, 0x00, 0};
  r[2] = static_cast<uint8_t>(-(r[0] + r[1]));
  uint8_t sum = 0;
  for (size_t i = 3; i + 1 < r.size(); ++i) {
    sum = static_cast<uint8_t>(sum + r[i]);
  }
  r.back() = static_cast<uint8_t>(-sum);
  auto p = parse_response(r.data(), r.size());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->netfn, 0);
  EXPECT_EQ(p->cmd, 1);
  EXPECT_EQ(p->seq, 5);
  EXPECT_EQ(p->code, 0);
  EXPECT_EQ(p->data, (bytes{0x01, 0x00, 0x00}));
  r[7] ^= 1; // a flipped bit breaks the checksum
  EXPECT_FALSE(parse_response(r.data(), r.size()));
}

TEST(rmcp, session_datagram_round_trips_and_tampering_is_refused) {
  auto keys = derive_keys(sample());
  bytes msg = encode_request(request{0x00, 0x02, {0x01}}, 9);
  auto packet = wrap_session(0x55667788, 7, keys, msg);
  auto d = parse_datagram(packet.data(), packet.size(), &keys.k1);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->encrypted);
  EXPECT_TRUE(d->authenticated);
  EXPECT_EQ(d->session_id, 0x55667788u);
  EXPECT_EQ(d->sequence, 7u);
  auto plain = decrypt_payload(d->body, keys.k2);
  ASSERT_TRUE(plain);
  EXPECT_EQ(*plain, msg);
  // any changed byte fails the integrity code
  for (size_t i = 4; i < packet.size(); i += 7) {
    auto bad = packet;
    bad[i] ^= 0x10;
    EXPECT_FALSE(parse_datagram(bad.data(), bad.size(), &keys.k1)) << i;
  }
  // without the key an authenticated datagram is not accepted
  EXPECT_FALSE(parse_datagram(packet.data(), packet.size(), nullptr));
  // a wrong K2 gives garbage whose pad does not check (or a different message)
  auto other = keys.k2;
  other[0] ^= 1;
  auto wrong = decrypt_payload(d->body, other);
  EXPECT_TRUE(!wrong || *wrong != msg);
}

TEST(rmcp, short_and_foreign_datagrams_are_refused) {
  bytes none;
  EXPECT_FALSE(parse_datagram(none.data(), 0, nullptr));
  auto plain = wrap_plain(payload::open_response, bytes(36, 0));
  EXPECT_TRUE(parse_datagram(plain.data(), plain.size(), nullptr));
  plain[14] = 0xff; // payload length past the end
  EXPECT_FALSE(parse_datagram(plain.data(), plain.size(), nullptr));
  auto asf = plain;
  asf[3] = 0x06; // RMCP class ASF, not IPMI
  EXPECT_FALSE(parse_datagram(asf.data(), asf.size(), nullptr));
}

TEST(rmcp, rakp_codes_depend_on_the_password) {
  auto h = sample();
  // the BMC's RAKP 2 code is HMAC(password, SIDc SIDm Rc Rm GUID role ulen user); a console
  // with the right password accepts it, one with another password does not
  auto bmc = h;
  auto keys = derive_keys(bmc);
  EXPECT_EQ(keys.sik.size(), 20u);
  auto msg3 = rakp3(2, h);
  ASSERT_EQ(msg3.size(), 8u + 20u);
  auto wrong = h;
  wrong.password = "other";
  EXPECT_NE(rakp3(2, wrong), msg3);
  EXPECT_NE(derive_keys(wrong).k1, keys.k1);
  EXPECT_FALSE(rakp2_valid(h, bytes(20, 0)));
  EXPECT_FALSE(rakp4_valid(h, keys, bytes(12, 0)));
}

TEST(rmcp, open_session_messages_have_the_spec_layout) {
  auto req = open_session_request(0, 0xaabbccdd, privilege_admin);
  ASSERT_EQ(req.size(), 32u);
  EXPECT_EQ(req[1], privilege_admin);
  EXPECT_EQ(req[4], 0xdd);
  EXPECT_EQ(req[8], 0x00);  // authentication payload
  EXPECT_EQ(req[12], 0x01); // RAKP-HMAC-SHA1
  EXPECT_EQ(req[16], 0x01); // integrity payload
  EXPECT_EQ(req[24], 0x02); // confidentiality payload
  bytes answer(36, 0);
  answer[1] = 0x0d;
  auto r = parse_open_session_response(answer);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 0x0d);
  EXPECT_EQ(status_text(r->status), "Unauthorized name");
  EXPECT_FALSE(parse_open_session_response(bytes(4, 0)));
}

TEST(chassis, rsetboot_uefi_sets_the_efi_bit_of_the_boot_flags) {
  // Set System Boot Options, parameter 5: valid + next boot only (0x80), EFI adds bit 5
  auto legacy = boot_action(boot_op::net)->first();
  ASSERT_GE(legacy.data.size(), 3u);
  EXPECT_EQ(legacy.data[1], 0x80);
  EXPECT_EQ(legacy.data[2], 0x04);
  auto efi = boot_action(boot_op::net, true)->first();
  EXPECT_EQ(efi.data[1], 0xa0);
  EXPECT_EQ(efi.data[2], 0x04);
}

TEST(chassis, actions_and_boot_texts) {
  EXPECT_EQ(parse_power("state"), power_op::stat);
  EXPECT_EQ(parse_power("softoff"), power_op::softoff);
  EXPECT_FALSE(parse_power("cycle"));
  EXPECT_EQ(parse_boot("default"), boot_op::def);
  EXPECT_FALSE(parse_boot("floppy"));
  EXPECT_EQ(boot_text(0x80, 0x04), "Network");
  EXPECT_EQ(boot_text(0x80, 0x08), "Hard Drive");
  EXPECT_EQ(boot_text(0x80, 0x14), "CD/DVD");
  EXPECT_EQ(boot_text(0x00, 0x00), "boot override inactive");
  EXPECT_EQ(boot_text(0x00, 0x04), "Network"); // ipmi_sim leaves the valid bit clear
  EXPECT_EQ(completion_text(0xd4), "Insufficient privilege level");
  EXPECT_EQ(completion_text(0x42), "Unknown error code 42h");

  // power on when it is on already: xCAT answers "on" without a Chassis Control
  auto a = power_action(power_op::on);
  EXPECT_EQ(a->first().cmd, 0x01);
  response st;
  st.cmd = 0x01;
  st.data = {0x01, 0, 0};
  auto s = a->next(st);
  EXPECT_FALSE(s.next);
  EXPECT_EQ(s.out, "on");
  // boot when off powers on
  auto b = power_action(power_op::boot);
  st.data = {0x00, 0, 0};
  s = b->next(st);
  ASSERT_TRUE(s.next);
  EXPECT_EQ(s.next->cmd, 0x02);
  EXPECT_EQ(s.next->data, (bytes{0x01}));
  response ok;
  ok.cmd = 0x02;
  EXPECT_EQ(b->next(ok).out, "on");
  response refused;
  refused.code = 0xd4;
  EXPECT_EQ(power_action(power_op::off)->next(refused).error, cws::base::node_errc::ipmi);
}

} // namespace
