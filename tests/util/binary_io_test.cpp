#include <gtest/gtest.h>

#include <string>

#include "util/binary_io.hpp"
#include "util/file_io.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

std::vector<std::uint8_t> sample_payload() {
  BinaryWriter w;
  w.put<std::uint32_t>(42);
  w.put<double>(3.5);
  w.put_string("hello");
  w.put_vector(std::vector<float>{1.f, 2.f, 3.f});
  return w.take();
}

TEST(BinaryIo, RoundTripsValues) {
  const auto bytes = sample_payload();
  BinaryReader r(bytes, "sample");
  EXPECT_EQ(r.get<std::uint32_t>(), 42u);
  EXPECT_EQ(r.get<double>(), 3.5);
  EXPECT_EQ(r.get_string(), "hello");
  EXPECT_EQ(r.get_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f}));
  EXPECT_TRUE(r.at_end());
}

TEST(BinaryIo, ReaderRefusesTruncation) {
  auto bytes = sample_payload();
  bytes.resize(bytes.size() - 3);
  BinaryReader r(bytes, "sample");
  r.get<std::uint32_t>();
  r.get<double>();
  r.get_string();
  EXPECT_THROW(r.get_vector<float>(), Error);
}

TEST(BinaryIo, ContainerRoundTripAndRefusals) {
  const auto payload = sample_payload();
  const auto sealed = seal_container("TTLTEST", 2, payload);
  const auto opened = open_container(sealed, "TTLTEST", 2, "x.bin");
  EXPECT_EQ(opened.version, 2u);
  EXPECT_EQ(opened.payload, payload);

  auto truncated = sealed;
  truncated.pop_back();
  EXPECT_THROW(open_container(truncated, "TTLTEST", 2, "x.bin"), Error);

  auto corrupted = sealed;
  corrupted.back() ^= 0x40;
  try {
    open_container(corrupted, "TTLTEST", 2, "x.bin");
    FAIL() << "corruption not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }

  EXPECT_THROW(open_container(sealed, "TTLTEST", 1, "x.bin"), Error);  // future version
  EXPECT_THROW(open_container(sealed, "OTHER", 2, "x.bin"), Error);    // wrong magic
}

TEST(FileIo, AtomicWriteReplacesWholeFile) {
  const std::string path = test::temp_dir() + "/f.bin";
  write_file_atomic(path, std::vector<std::uint8_t>{1, 2, 3});
  write_file_atomic(path, std::vector<std::uint8_t>{9});
  EXPECT_EQ(read_file_bytes(path), (std::vector<std::uint8_t>{9}));
  EXPECT_THROW(read_file_bytes(path + ".missing"), InputError);
}

}  // namespace
}  // namespace ttlpred
