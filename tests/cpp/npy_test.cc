// .npy decoding (ge_run's inputs): round trips with the encoder; malformed files are clear errors.
#include <gtest/gtest.h>

#include "ge/serialize/npy.h"

namespace ge {
namespace {

TEST(NpyTest, DecodesWhatItEncodes) {
  for (const Shape& shape : {Shape{2, 3}, Shape{4}, Shape{}, Shape{0, 5}}) {
    TensorDesc desc(DataType::kInt32, shape);
    std::vector<int32_t> values(static_cast<size_t>(desc.NumElements()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * 7 - 3);
    auto npy = EncodeNpy(desc, values.data());
    ASSERT_TRUE(npy.ok());
    auto tensor = DecodeNpy(*npy);
    ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
    EXPECT_EQ(tensor->desc(), desc);
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(tensor->data_as<int32_t>()[i], values[i]);
  }
}

std::string Npy(const std::string& header, const std::string& data) {
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string Error(const std::string& bytes) {
  auto t = DecodeNpy(bytes);
  return t.ok() ? "" : t.status().message();
}

TEST(NpyTest, MalformedFilesAreClearErrors) {
  const std::string four_floats(16, '\0');
  EXPECT_NE(Error("hello").find("not a .npy file"), std::string::npos);
  EXPECT_NE(Error(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four_floats).substr(0, 12))
                .find("does not fit"),
            std::string::npos);
  EXPECT_NE(Error(Npy("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", four_floats)).find("not supported"),
            std::string::npos);
  EXPECT_NE(Error(Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }", four_floats)).find("Fortran"),
            std::string::npos);
  EXPECT_NE(Error(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", four_floats)).find("holds 16 bytes"),
            std::string::npos);
  EXPECT_NE(
      Error(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999,), }", "")).find("implausible"),
      std::string::npos);
  EXPECT_NE(Error(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", "")).find("not a tuple"),
            std::string::npos);
  EXPECT_NE(Error(Npy("{'descr': '<f4'}", "")).find("lacks"), std::string::npos);
  EXPECT_EQ(Error(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", four_floats)), "");
}

}  // namespace
}  // namespace ge
