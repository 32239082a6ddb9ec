// The kernel cache's trust rules (ge/serialize/trusted_dir.h): a directory this user alone can
// write is trusted, one others can write, one another user owns, or a symbolic link (unless
// allowed, and then only to a safe target) is not; the cache key is private and its tags
// authenticate bytes.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ge/serialize/trusted_dir.h"

namespace ge {
namespace {

namespace fs = std::filesystem;

class TrustedDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // mkdtemp under /tmp: a sticky, world-writable parent, as most caches' ancestors are not.
    std::string pattern = (fs::temp_directory_path() / "ge_trusted_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(dir_, error);
  }
  fs::path dir_;
};

TEST_F(TrustedDirTest, ADirectoryOnlyThisUserCanWriteIsTrustedAndCreatedPrivate) {
  auto root = MakeTrustedDir((dir_ / "cache" / "").string(), {"kernels"}, {});
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(*root, (dir_ / "cache").string());
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "cache" / "kernels").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(CheckTrustedDir((dir_ / "cache").string(), {}).ok());
}

TEST_F(TrustedDirTest, ADirectoryOthersCanWriteIsRefusedAndLeftAsItIs) {
  fs::create_directories(dir_ / "cache" / "kernels");
  ::chmod((dir_ / "cache" / "kernels").c_str(), 0777);
  auto root = MakeTrustedDir((dir_ / "cache").string(), {"kernels"}, {});
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("kernels is writable by its group or others (mode 777)"), std::string::npos)
      << root.status().message();
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "cache" / "kernels").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0777u);  // judged, never chmod'ed
}

TEST_F(TrustedDirTest, AParentOthersCanRenameInIsRefused) {
  fs::create_directories(dir_ / "shared");
  ::chmod((dir_ / "shared").c_str(), 0777);  // not sticky: anyone may replace cache/
  auto root = MakeTrustedDir((dir_ / "shared" / "cache").string(), {}, {});
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("shared is writable by its group or others"), std::string::npos)
      << root.status().message();
  ::chmod((dir_ / "shared").c_str(), 01777);  // sticky, like /tmp: fine
  EXPECT_TRUE(MakeTrustedDir((dir_ / "shared" / "cache").string(), {}, {}).ok());
}

TEST_F(TrustedDirTest, SymbolicLinksAreRefusedUnlessAllowedAndThenOnlyToSafeTargets) {
  fs::create_directories(dir_ / "real");
  ::chmod((dir_ / "real").c_str(), 0700);
  fs::create_directory_symlink(dir_ / "real", dir_ / "link");
  auto refused = MakeTrustedDir((dir_ / "link").string(), {}, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("link is a symbolic link"), std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(MakeTrustedDir((dir_ / "link").string(), {}, TrustOptions{true}).ok());

  fs::create_directories(dir_ / "open");
  ::chmod((dir_ / "open").c_str(), 0777);
  fs::create_directories(dir_ / "cache");
  fs::create_directory_symlink(dir_ / "open", dir_ / "cache" / "kernels");
  auto unsafe_target = MakeTrustedDir((dir_ / "cache").string(), {"kernels"}, TrustOptions{true});
  ASSERT_FALSE(unsafe_target.ok());
  EXPECT_NE(unsafe_target.status().message().find("open is writable by its group or others"), std::string::npos)
      << unsafe_target.status().message();
}

TEST_F(TrustedDirTest, ADirectoryAnotherUserOwnsIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  fs::create_directories(dir_ / "theirs");
  ASSERT_EQ(::chown((dir_ / "theirs").c_str(), 65534, 65534), 0);
  ::chmod((dir_ / "theirs").c_str(), 0700);
  auto root = MakeTrustedDir((dir_ / "theirs").string(), {}, {});
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("theirs belongs to user 65534, not to this user (0)"), std::string::npos)
      << root.status().message();
}

TEST_F(TrustedDirTest, TheKeyIsCreatedPrivateOnceAndItsTagsAuthenticateBytes) {
  auto first = CacheAuthenticator::ForRoot(dir_.string());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 32);
  auto second = CacheAuthenticator::ForRoot(dir_.string());
  ASSERT_TRUE(second.ok());
  const std::string tag = first->Tag("library bytes");
  EXPECT_EQ(tag.size(), 64u);
  EXPECT_TRUE(second->Verify("library bytes", tag));  // the same key from the file
  EXPECT_FALSE(second->Verify("library bytez", tag));
  EXPECT_FALSE(second->Verify("library bytes", tag.substr(1)));

  // Another cache has another key: its tags mean nothing here.
  fs::create_directories(dir_ / "other");
  auto other = CacheAuthenticator::ForRoot((dir_ / "other").string());
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->Verify("library bytes", tag));
}

TEST_F(TrustedDirTest, AKeyOthersCanReadOrALinkedKeyIsRefused) {
  ASSERT_TRUE(CacheAuthenticator::ForRoot(dir_.string()).ok());
  ::chmod((dir_ / "key").c_str(), 0644);
  auto readable = CacheAuthenticator::ForRoot(dir_.string());
  ASSERT_FALSE(readable.ok());
  EXPECT_NE(readable.status().message().find("readable or writable by others (mode 644)"), std::string::npos);

  fs::create_directories(dir_ / "linked");
  fs::create_symlink(dir_ / "key", dir_ / "linked" / "key");
  auto linked = CacheAuthenticator::ForRoot((dir_ / "linked").string());
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.status().message().find("is a symbolic link"), std::string::npos);
}

TEST_F(TrustedDirTest, TheProcessPrivateDirectoryIsTrustedAndStable) {
  auto first = ProcessPrivateCacheDir();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(CheckTrustedDir(*first, {}).ok());
  auto second = ProcessPrivateCacheDir();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
}

TEST_F(TrustedDirTest, AForkedChildThatExitsLeavesTheParentsPrivateDirectory) {
  auto dir = ProcessPrivateCacheDir();
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  const pid_t child = ::fork();
  if (child == 0) std::exit(0);  // runs static destructors, the private directory's remover among them
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(fs::is_directory(*dir));
}

}  // namespace
}  // namespace ge
