#include <gtest/gtest.h>

#include <filesystem>
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

// A file's header and size are judged before the rest is read: a 1 GiB sparse file that says
// it is no container is refused after its first 24 bytes (the check sees exactly those), and a
// container padded past its payload by its size alone.
TEST(FileIo, AHeadCheckRefusesBeforeTheRestIsRead) {
  const std::string path = test::temp_dir() + "/head.bin";
  const auto sealed = seal_container("TTLTEST", 2, std::vector<std::uint8_t>(100, 7));
  write_file_atomic(path, sealed);
  std::vector<std::uint8_t> seen_head;
  std::uint64_t seen_size = 0;
  const auto bytes = read_regular_file(
      path, 1 << 20,
      [&](const std::vector<std::uint8_t>& head, std::uint64_t size) {
        seen_head = head;
        seen_size = size;
        check_container_head(head, size, "TTLTEST", 2, path);
      },
      kContainerHeaderBytes);
  EXPECT_EQ(bytes, sealed);  // a file that passes is read whole, as without the check
  EXPECT_EQ(seen_head, std::vector<std::uint8_t>(sealed.begin(), sealed.begin() + kContainerHeaderBytes));
  EXPECT_EQ(seen_size, sealed.size());
  auto refusal = [&](const std::string& file) {
    try {
      read_regular_file(file, std::uint64_t{4} << 30,
                        [&](const std::vector<std::uint8_t>& head, std::uint64_t size) {
                          check_container_head(head, size, "TTLTEST", 2, file);
                        },
                        kContainerHeaderBytes);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  const std::string padded = test::temp_dir() + "/padded.bin";
  std::filesystem::copy_file(path, padded);
  std::filesystem::resize_file(padded, sealed.size() + 5);
  EXPECT_NE(refusal(padded).find("truncated or padded: header says 100 payload bytes, file has 105"), std::string::npos)
      << refusal(padded);
  const std::string huge = test::temp_dir() + "/huge.bin";
  write_file_atomic(huge, std::vector<std::uint8_t>(64, 'x'));
  std::filesystem::resize_file(huge, std::uint64_t{1} << 30);  // sparse: no disk, but 1 GiB to read
  EXPECT_NE(refusal(huge).find("wrong magic bytes"), std::string::npos) << refusal(huge);
  const std::string tiny = test::temp_dir() + "/tiny.bin";
  write_file_atomic(tiny, std::vector<std::uint8_t>{'T', 'T'});
  EXPECT_NE(refusal(tiny).find("truncated"), std::string::npos) << refusal(tiny);
}

TEST(FileIo, AtomicWriteReplacesWholeFile) {
  const std::string path = test::temp_dir() + "/f.bin";
  write_file_atomic(path, std::vector<std::uint8_t>{1, 2, 3});
  write_file_atomic(path, std::vector<std::uint8_t>{9});
  EXPECT_EQ(read_file_bytes(path), (std::vector<std::uint8_t>{9}));
  EXPECT_THROW(read_file_bytes(path + ".missing"), InputError);
}

// A write that cannot happen names the file asked for and the folder that is missing, not
// the temporary file the atomic write goes through.
TEST(FileIo, AFailedWriteNamesItsPathAndTheMissingFolder) {
  const std::string dir = test::temp_dir() + "/no/such";
  try {
    write_file_atomic(dir + "/p.csv", std::vector<std::uint8_t>{1});
    FAIL() << "wrote into a missing folder";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + dir + "/p.csv: No such file or directory (no folder " + dir + ")");
  }
}

}  // namespace
}  // namespace ttlpred
